"""End to end in a real browser: JupyterLab runs the tour notebook, headless Chromium shows it.

    python -m pytest tests/viz/test_browser.py -s                  # lessons 00 and 09
    MINIGRAD_BROWSER_NOTEBOOK=lessons/10_nn_and_optim.ipynb python -m pytest tests/viz/test_browser.py -s -k tour

We start JupyterLab on a free loopback port with a random token and empty
temporary config, data, runtime and IPython folders (so nothing of the
machine's Jupyter setup is used or changed), serving a *copy* of the course
(lessons/ and exercises/ side by side, as a learner opens it, so the links
between them work; the committed notebooks never get outputs saved into them). Chromium (Debian's ``chromium``, driven by Playwright, never a
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

ROOT = Path(__file__).resolve().parents[2]
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


COURSE = ("lessons", "exercises")  # served side by side, as `minigrad-course open` serves them


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
    """A JupyterLab server on a copy of the course: ``(base_url, token, path of the notebook in it)``."""
    tmp = tmp_path_factory.mktemp("jupyter")
    served = tmp / "course"
    for folder in COURSE:
        shutil.copytree(ROOT / folder, served / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    if notebook.parent.parent == ROOT and notebook.parent.name in COURSE:
        name = f"{notebook.parent.name}/{notebook.name}"
    else:  # a notebook from elsewhere: its own folder beside the course
        shutil.copytree(notebook.parent, served / "other", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        name = f"other/{notebook.name}"
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
        yield base, token, name
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
    deadline = time.monotonic() + 3 * WAIT_MS / 1000  # a kernel start took over a minute on a loaded machine
    while time.monotonic() < deadline:
        if page.evaluate(NOTEBOOK_READY):
            return
        accept = page.locator(".jp-Dialog .jp-mod-accept")
        if accept.count() and accept.first.is_visible():
            accept.first.click()
        time.sleep(0.5)
    pytest.fail(f"the notebook's kernel was not ready within {3 * WAIT_MS / 1000:.0f} s")


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


# A projector: a 1280x720 window at 150% zoom is a 853x480 CSS-pixel page at 1.5 device pixels each.
PROJECTOR = {"viewport": {"width": 853, "height": 480}, "device_scale_factor": 1.5}
MIN_TEXT_PX = 12

# Counts the dashboard's frames as they arrive: each update replaces its output with a new view.
COUNT_FRAMES = """() => {
    window.mgFrames = [];
    new MutationObserver(mutations => {
        for (const m of mutations) for (const n of m.addedNodes) {
            const view = n.nodeType === 1 && (n.matches('.mg-dashboard') ? n : n.querySelector('.mg-dashboard'));
            if (view) window.mgFrames.push(view.querySelector('.mg-status').textContent);
        }
    }).observe(document.body, {childList: true, subtree: true});
}"""
# The smallest text of every drawn graph, in CSS pixels as shown (its font size times the SVG's scale).
GRAPH_TEXT = """() => [...document.querySelectorAll('.minigrad-graph svg')].map(svg => {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const sizes = [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
    return Math.min(...sizes);
})"""
# Outputs wider than their cell (what makes a horizontal scrollbar appear).
OVERFLOWING = """() => [...document.querySelectorAll('.jp-OutputArea-output')]
    .filter(o => o.scrollWidth > o.clientWidth + 1)
    .map(o => o.textContent.slice(0, 60))"""


def test_tour_as_projected(notebook, browser, jupyter, capsys):  # cheapest skips first
    base, token, name = jupyter
    page = browser.new_page(**PROJECTOR)
    page.set_default_timeout(WAIT_MS)
    stem = Path(name).stem
    shots = []
    try:
        page.goto(f"{base}/lab/tree/{name}?token={token}&reset")
        wait_for_kernel(page)
        page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")  # as a lecturer would
        check_notebook(page, lambda what: shots.append(shoot(page, f"{stem}-{what}")))
        check_reopened(page, base, token, name)
        check_link_to_a_worksheet(page)
    finally:  # on failure too: the picture shows what went wrong
        shots.append(shoot(page, f"{stem}-last"))
        page.close()
        with capsys.disabled():
            print("\nscreenshots: " + ", ".join(map(str, shots)))


def shoot(page, what: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{what}.png"
    page.screenshot(path=str(path))
    return path


def check_notebook(page, shoot) -> None:
    page.evaluate(COUNT_FRAMES)
    state = run_all_cells(page)
    assert not state["errors"], "cells raised: " + "; ".join(state["errors"])
    assert state["pending"] == 0 and state["cells"] > 0

    # Every graph readable as shown, nothing wider than its cell.
    graph = visible(page.locator(".minigrad-graph svg").first, "draw_graph picture (SVG output)")
    smallest = page.evaluate(GRAPH_TEXT)
    assert smallest and min(smallest) >= MIN_TEXT_PX, f"graph text shown at {min(smallest):.1f} px"
    assert not page.evaluate(OVERFLOWING), f"outputs wider than the cell: {page.evaluate(OVERFLOWING)}"

    # The dashboard showed the network learning, not just the end.
    frames = page.evaluate("window.mgFrames")
    assert len(set(frames)) >= 12, f"the dashboard showed {len(set(frames))} frames: {frames}"
    dashboard = page.locator(".mg-dashboard").first
    dashboard.scroll_into_view_if_needed()
    shoot("dashboard")
    box, cell = dashboard.bounding_box(), page.locator(".jp-OutputArea-output", has=dashboard).first.bounding_box()
    assert box["width"] <= cell["width"] + 1 and box["height"] <= PROJECTOR["viewport"]["height"], \
        "the dashboard (status, charts and boundary) does not fit on the projected screen"

    # The stepper: the only widget with a play button; its box holds the slider and the picture.
    assert "Error displaying widget" not in page.locator(".jp-Notebook").inner_text()
    stepper = visible(page.locator(".jp-OutputArea-output .widget-vbox", has=page.locator("button", has_text="play")).first,
                      "BackwardStepper widget (a box with a play button)")
    stepper.scroll_into_view_if_needed()
    picture = visible(stepper.locator(".widget-html svg").first, "picture in the BackwardStepper")
    readout = stepper.locator(".widget-readout")
    assert readout.inner_text().strip() == "1" and "Step 1 of" in stepper.inner_text()
    shoot("stepper")

    def changes(action, what: str) -> None:
        before = stepper.locator(".widget-html").first.inner_html()
        action()
        try:
            page.wait_for_function("([el, html]) => el.innerHTML !== html",
                                   arg=[stepper.locator(".widget-html").first.element_handle(), before], timeout=WAIT_MS)
        except Exception:  # noqa: BLE001  (a timeout: say which action did nothing)
            pytest.fail(f"the stepper's picture did not change after {what}")

    # The keyboard: one step right.
    changes(lambda: (stepper.locator(".noUi-handle").focus(), page.keyboard.press("ArrowRight")), "ArrowRight")
    assert readout.inner_text().strip() == "2"
    visible(stepper.get_by_text("Step 2 of", exact=False), "text 'Step 2 of' in the stepper after moving its slider")
    # The mouse: drag the handle to the far right.
    handle, track = stepper.locator(".noUi-handle").bounding_box(), stepper.locator(".noUi-base").bounding_box()

    def drag() -> None:
        page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
        page.mouse.down()
        page.mouse.move(track["x"] + track["width"] + 20, handle["y"] + handle["height"] / 2, steps=8)
        page.mouse.up()

    changes(drag, "dragging the slider")
    last = readout.inner_text().strip()
    assert int(last) > 2, f"dragging to the end left the slider at {last}"
    # Play: from the start, the picture moves on by itself.
    changes(lambda: (stepper.locator(".noUi-handle").focus(), page.keyboard.press("Home")), "the Home key")
    assert readout.inner_text().strip() == "1"
    play = stepper.locator("button", has_text="play")
    changes(play.click, "pressing play")
    assert "Play the backward pass" in (play.get_attribute("title") or ""), "play has no tooltip"
    stop = stepper.locator("button", has_text="stop")
    assert stop.get_attribute("title"), "stop has no tooltip"
    stop.click()
    shoot("stepper-played")
    graph.scroll_into_view_if_needed()


def check_reopened(page, base: str, token: str, name: str) -> None:
    """Save, restart the kernel, reload: the stepper's widget is gone, its static picture is shown."""
    page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
    time.sleep(2)
    for kernel in api(base, token, "/api/kernels"):
        api(base, token, f"/api/kernels/{kernel['id']}/restart", method="POST")
    page.reload()
    wait_for_kernel(page)
    static = visible(page.locator("[class$='-static'] svg").first, "static picture of the stepper after a reload")
    static.scroll_into_view_if_needed()
    shoot(page, f"{Path(name).stem}-reopened")


def check_link_to_a_worksheet(page) -> None:
    """A learner clicks the first link to a worksheet: JupyterLab opens it (not "file not found")."""
    link = page.locator(".jp-RenderedMarkdown a[href*='exercises/']").first
    href = link.get_attribute("href")
    link.scroll_into_view_if_needed()
    link.click()
    target = href.split("exercises/", 1)[1].split("?")[0].split("#")[0]
    try:
        page.wait_for_function("name => { const w = window.jupyterapp.shell.currentWidget;"
                               " return w && w.context && w.context.path === 'exercises/' + name"
                               " && w.context.isReady; }", arg=target, timeout=3 * WAIT_MS)  # a whole notebook to open
    except Exception:  # noqa: BLE001  (a timeout: say which link did not open)
        pytest.fail(f"the lesson's link {href} did not open the worksheet")
    assert not page.locator(".jp-Dialog").count(), page.locator(".jp-Dialog").inner_text()
    shoot(page, "link-to-worksheet")


def test_explorer_fits_the_projector(browser, jupyter, capsys):
    """Lesson 09's explorer: sliders and both panels on one projected screen, sliders lined up."""
    base, token, _ = jupyter
    page = browser.new_page(**PROJECTOR)
    page.set_default_timeout(WAIT_MS)
    try:
        page.goto(f"{base}/lab/tree/lessons/09_higher_order.ipynb?token={token}&reset")
        wait_for_kernel(page)
        page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
        state = run_all_cells(page)
        assert not state["errors"], "cells raised: " + "; ".join(state["errors"])
        explorer = visible(page.locator(".jp-OutputArea-output .widget-vbox", has=page.locator(".widget-image")).first,
                           "function explorer")
        explorer.scroll_into_view_if_needed()
        tracks = [t.bounding_box() for t in explorer.locator(".noUi-base").all()]
        assert len(tracks) == 2 and abs(tracks[0]["x"] - tracks[1]["x"]) < 1 and \
            abs(tracks[0]["width"] - tracks[1]["width"]) < 1, f"the sliders do not line up: {tracks}"
        assert explorer.bounding_box()["height"] <= PROJECTOR["viewport"]["height"], "the explorer is taller than the screen"
        assert not page.evaluate(OVERFLOWING)
        assert "f_prime" not in explorer.inner_text()
    finally:
        shot = shoot(page, "09_higher_order-explorer")
        page.close()
        with capsys.disabled():
            print(f"\nscreenshot: {shot}")
