"""End to end in a real browser: JupyterLab runs the tour notebook, headless Chromium shows it.

    python -m pytest tests/test_browser.py -s                  # lessons/00_tour.ipynb
    MINIGRAD_BROWSER_NOTEBOOK=/path/to/other.ipynb python -m pytest tests/test_browser.py -s

We start JupyterLab on a free loopback port with a random token and empty
temporary config, data, runtime and IPython folders (so nothing of the
machine's Jupyter setup is used or changed), serving a *copy* of the
notebook's folder (so the committed notebook never gets outputs saved into
it). Chromium (Debian's ``chromium``, driven by Playwright, never a
downloaded browser) opens the notebook and runs all cells; then we check that
no cell shows an error, that a graph image and the backward stepper widget
rendered, and that moving the stepper's slider redraws its picture through
the live kernel. A screenshot is saved to ``test-artifacts/browser/``.

The notebook must call ``draw_graph`` (a PNG output) and show a
``BackwardStepper`` (the only widget with a play button).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_NOTEBOOK = "lessons/00_tour.ipynb"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
SERVER_START_TIMEOUT = 90  # seconds
RUN_ALL_TIMEOUT = 300  # seconds for every cell of the notebook
WAIT_MS = 60_000  # default for each browser wait

pytestmark = pytest.mark.slow


def notebook_path() -> Path:
    chosen = os.environ.get("MINIGRAD_BROWSER_NOTEBOOK")
    path = ROOT / (chosen or DEFAULT_NOTEBOOK)  # an absolute path replaces ROOT
    if not path.is_file():
        if chosen:
            pytest.fail(f"MINIGRAD_BROWSER_NOTEBOOK={chosen}: no such notebook")
        pytest.skip(f"{DEFAULT_NOTEBOOK} not written yet")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base: str, token: str, path: str, method: str = "GET"):
    request = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body else None


@pytest.fixture(scope="module")
def notebook() -> Path:
    return notebook_path()


@pytest.fixture(scope="module")
def jupyter(notebook, tmp_path_factory):
    """A JupyterLab server on a copy of the notebook's folder: ``(base_url, token, notebook_name)``."""
    tmp = tmp_path_factory.mktemp("jupyter")
    served = tmp / "notebooks"
    shutil.copytree(notebook.parent, served, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(notebook, served / notebook.name)
    config = tmp / "config"
    # Every cell in the DOM (no virtual scrolling), and no "receive news?" toast over the page.
    settings = config / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    (config / "labconfig").mkdir()
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))

    port, token = free_port(), os.urandom(16).hex()
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # the inline backend, as a learner has
    env.update(
        JUPYTER_CONFIG_DIR=str(config), JUPYTER_DATA_DIR=str(tmp / "data"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), IPYTHONDIR=str(tmp / "ipython"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    log = open(tmp / "jupyter.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={served}", "--LabApp.expose_app_in_browser=True"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,  # its own process group
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited with {server.returncode}:\n{(tmp / 'jupyter.log').read_text()}")
            try:
                api(base, token, "/api/status")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within {SERVER_START_TIMEOUT} s")
                time.sleep(0.5)
        yield base, token, notebook.name
    finally:
        try:  # kernels run in their own sessions: shut them down through the server first
            for kernel in api(base, token, "/api/kernels"):
                api(base, token, f"/api/kernels/{kernel['id']}", method="DELETE")
        except OSError:
            pass
        stop_group(server)
        log.close()


def stop_group(process: subprocess.Popen) -> None:
    """Stop ``process`` and everything in its process group: politely, then for sure."""
    for sig, patience in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:  # the whole group is gone already
            return
        try:
            process.wait(timeout=patience)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install playwright")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_api.sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=WAIT_MS)
        except Exception as e:  # noqa: BLE001  (whatever the reason, the browser cannot run here)
            pytest.skip(f"Chromium cannot be launched: {e}")
        try:
            yield chromium
        finally:
            chromium.close()


# JavaScript run in the page: the notebook's state, read from JupyterLab's own models.
NOTEBOOK_STATE = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    const cells = panel.content.widgets.filter(
        c => c.model.type === 'code' && c.model.sharedModel.getSource().trim() !== '');
    const errors = [];
    for (const [index, cell] of cells.entries()) {
        for (let i = 0; i < cell.model.outputs.length; i++) {
            const out = cell.model.outputs.get(i).toJSON();
            if (out.output_type === 'error') errors.push(`code cell ${index + 1}: ${out.ename}: ${out.evalue}`);
        }
    }
    return {
        kernel: kernel ? kernel.status : 'none',
        pending: cells.filter(c => c.model.executionCount === null || c.promptNode.textContent.includes('*')).length,
        cells: cells.length,
        errors: errors,
    };
}"""
NOTEBOOK_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
    return Boolean(kernel && kernel.status === 'idle' && panel.content.widgets.length);
}"""


def wait_for_kernel(page) -> None:
    """Wait until the notebook's kernel is idle, accepting the kernel JupyterLab proposes if
    it asks (a notebook saved without kernel metadata makes it ask)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        if page.evaluate(NOTEBOOK_READY):
            return
        accept = page.locator(".jp-Dialog .jp-mod-accept")
        if accept.count() and accept.first.is_visible():
            accept.first.click()
        time.sleep(0.5)
    pytest.fail(f"the notebook's kernel was not ready within {WAIT_MS / 1000:.0f} s")


def visible(locator, what: str, timeout_ms: int = 20_000):
    """``locator`` once it is visible; a clear failure if the notebook never shows it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        locator.wait_for(state="visible", timeout=timeout_ms)
    except PlaywrightTimeout:
        pytest.fail(f"the notebook shows no {what} within {timeout_ms / 1000:.0f} s of running")
    return locator


def run_all_cells(page) -> dict:
    """Run every cell and wait until they all ran (or one failed) and the kernel is idle."""
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    deadline, settled, state = time.monotonic() + RUN_ALL_TIMEOUT, 0, {}
    while time.monotonic() < deadline:
        time.sleep(0.5)
        state = page.evaluate(NOTEBOOK_STATE)
        finished = state["kernel"] == "idle" and (state["pending"] == 0 or state["errors"])
        settled = settled + 1 if finished else 0
        if settled >= 3:  # idle three polls in a row: not just between two cells
            return state
    pytest.fail(f"the notebook did not finish within {RUN_ALL_TIMEOUT} s: {state}")


def test_notebook_in_jupyterlab(notebook, browser, jupyter, capsys):  # cheapest skips first
    base, token, name = jupyter
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.set_default_timeout(WAIT_MS)
    screenshot = ARTIFACTS / f"{Path(name).stem}.png"
    try:
        page.goto(f"{base}/lab/tree/{name}?token={token}&reset")
        wait_for_kernel(page)
        check_notebook(page)
    finally:  # on failure too: the picture shows what went wrong
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot))
        page.close()
        with capsys.disabled():
            print(f"\nscreenshot: {screenshot}")


def check_notebook(page) -> None:
    state = run_all_cells(page)
    assert not state["errors"], "cells raised: " + "; ".join(state["errors"])
    assert state["pending"] == 0 and state["cells"] > 0

    # The graph: a PNG output that loaded.
    graph = visible(page.locator(".jp-OutputArea-output.jp-RenderedImage img").first, "draw_graph picture (PNG output)")
    assert graph.evaluate("img => img.naturalWidth") > 100
    # The stepper: the only widget with a play button; its box holds the slider and the picture.
    assert "Error displaying widget" not in page.locator(".jp-Notebook").inner_text()
    stepper = visible(page.locator(".jp-OutputArea-output .widget-vbox", has=page.locator(".widget-play")).first,
                      "BackwardStepper widget (a box with a play button)")
    picture = visible(stepper.locator(".widget-image"), "picture in the BackwardStepper")
    page.wait_for_function("img => img.naturalWidth > 100", arg=picture.element_handle(), timeout=WAIT_MS)
    readout = stepper.locator(".widget-readout")
    assert readout.inner_text().strip() == "0"
    assert "Step 1 of" in stepper.inner_text()

    # Move the slider one step: the kernel redraws the graph with the next node highlighted.
    before = picture.get_attribute("src")
    stepper.locator(".noUi-handle").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("([img, src]) => img.getAttribute('src') !== src",
                           arg=[picture.element_handle(), before], timeout=WAIT_MS)
    assert readout.inner_text().strip() == "1"
    visible(stepper.get_by_text("Step 2 of", exact=False), "text 'Step 2 of' in the stepper after moving its slider")
    graph.scroll_into_view_if_needed()
