"""End to end in a real browser, as a lecturer projects it: JupyterLab runs every lesson that
shows a widget of ``minigrad.viz``, headless Chromium shows it at 853x480 CSS px, device
scale 1.5 (a 1280x720 projector at 150%), with the left sidebar open and collapsed.

    python -m pytest tests/viz/test_browser.py -s                       # every lesson below
    MINIGRAD_BROWSER_LESSONS=00_tour,09_higher_order python -m pytest tests/viz/test_browser.py -s

We start JupyterLab on a free loopback port with a random token and empty temporary config,
data, runtime and IPython folders (nothing of the machine's Jupyter setup is used or
changed), with the settings ``minigrad-course open`` ships (``minigrad.course.lab_settings``),
serving a *copy* of the course (lessons/ and exercises/ side by side, as a learner opens it).
Chromium (Debian's ``chromium``, driven by Playwright, never a downloaded browser) opens each
lesson and checks:

- opening it does not mark it modified (nor reopening it after a save, a kernel restart and
  a reload), and no news toast covers it;
- all cells run without an error;
- in both sidebar states: every text of every output at least 12 px as shown (SVG text
  through its scale), nothing wider than its cell, every picture of minigrad.viz (graphs,
  steppers, explorers, sliders, dashboards) at most 360 px tall (the notebook shows 359 px);
- a stepper steps with the keyboard, the mouse and play, and the running node stays in view;
- the dashboard shows a dozen frames, lesson 00's first one visibly wrong, and brings itself
  on screen when training starts (Shift+Enter and Ctrl+Enter);
- the explorer (lessons 01 and 09) says in words where a function is undefined, and draws the rest;
- lesson 11's sliders redraw their grids;
- saved, kernel restarted, page reloaded: no "Error displaying widget", the last pictures show.

Figures go to ``test-artifacts/browser/measures.json`` and screenshots beside it.
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

from minigrad.course import lab_settings

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
SERVER_START_TIMEOUT = 90  # seconds
RUN_ALL_TIMEOUT = 300  # seconds for every cell of a lesson
WAIT_MS = 60_000  # default for each browser wait

# Every lesson that shows a widget or a live view of minigrad.viz, and what it shows.
LESSONS = {
    "00_tour": {"stepper", "dashboard"},
    "01_derivatives": {"explorer"},
    "02_graph": {"stepper"},
    "04_topological_backward": {"stepper"},
    "05_custom_functions": {"dashboard"},
    "06_broadcasting": {"sliders"},
    "07_numba": {"sliders"},
    "08_inplace_and_hooks": {"stepper"},
    "09_higher_order": {"explorer"},
    "10_nn_and_optim": {"dashboard"},
    "11_cnn": {"dashboard", "sliders"},
    "12_attention": {"dashboard"},
}
COURSE = ("lessons", "exercises")  # served side by side, as `minigrad-course open` serves them

# A projector: a 1280x720 window at 150% zoom is a 853x480 CSS-pixel page at 1.5 device pixels each.
PROJECTOR = {"viewport": {"width": 853, "height": 480}, "device_scale_factor": 1.5}
MIN_TEXT_PX = 12
MAX_WIDGET_PX = 360
MIN_FRAMES = {"12_attention": 2}  # frames of the dashboard during run-all; lesson 12's short run has 25 steps

pytestmark = pytest.mark.slow


# What makes a lesson show a widget or a live view (the names lessons call).
WIDGET_CALLS = {"BackwardStepper(": "stepper", "function_explorer(": "explorer", "FunctionExplorer(": "explorer",
                "TrainingDashboard(": "dashboard", "sliders(": "sliders", "interact(": "sliders",
                "interactive(": "sliders"}


def test_every_lesson_with_a_widget_is_projected():
    """LESSONS lists every lesson whose code makes a widget or a dashboard, and what it shows
    (a file check, no browser: a lesson that gains a widget must be added above)."""
    found = {}
    for notebook in sorted((ROOT / "lessons").glob("*.ipynb")):
        code = "".join("".join(c["source"]) for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
                       if c["cell_type"] == "code")
        shows = {what for call, what in WIDGET_CALLS.items() if call in code}
        if shows:
            found[notebook.stem] = shows
    assert found == LESSONS


def chosen_lessons() -> list[str]:
    chosen = os.environ.get("MINIGRAD_BROWSER_LESSONS")
    return [name.strip() for name in chosen.split(",")] if chosen else list(LESSONS)


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
def jupyter(tmp_path_factory):
    """A JupyterLab server on a copy of the course, with the course's settings: ``(base_url, token)``."""
    tmp = tmp_path_factory.mktemp("jupyter")
    served = tmp / "course"
    for folder in COURSE:
        shutil.copytree(ROOT / folder, served / folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    config = tmp / "config"
    # Every cell in the DOM (no virtual scrolling), so every output can be measured.
    settings = config / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    app_settings = lab_settings.write_settings(served, tmp / "app-settings").parent  # what `open` ships

    port, token = free_port(), os.urandom(16).hex()
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # the inline backend, as a learner has
    env.update(
        JUPYTER_CONFIG_DIR=str(config), JUPYTER_DATA_DIR=str(tmp / "data"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), IPYTHONDIR=str(tmp / "ipython"),
        MINIGRAD_COURSE_FAST="1",  # lesson 12 trains for a minute, not four
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    log = open(tmp / "jupyter.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={served}", "--LabApp.expose_app_in_browser=True",
         f"--LabApp.app_settings_dir={app_settings}", *lab_settings.SERVER_ARGUMENTS],
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
        yield base, token
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


@pytest.fixture(scope="module")
def measures():
    """Every figure measured, per lesson; written out (and printed) at the end."""
    found: dict = {}
    yield found
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "measures.json").write_text(json.dumps(found, indent=2))
    print("\n" + "\n".join(f"{lesson}: {json.dumps(m)}" for lesson, m in found.items()))


# JavaScript run in the page: the notebook's state, read from JupyterLab's own models.
PANEL = "window.jupyterapp.shell.currentWidget"
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
        dirty: panel.model.dirty,
    };
}"""
NOTEBOOK_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
    return Boolean(kernel && kernel.status === 'idle' && panel.content.widgets.length && panel.context.isReady);
}"""
# The smallest text in any output, in CSS px as shown: SVG text through its scale on screen.
SMALLEST_TEXT = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    let best = {px: 1e9, text: ''};
    for (const out of panel.content.node.querySelectorAll('.jp-OutputArea-output')) {
        const walker = document.createTreeWalker(out, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            const text = n.textContent.trim();
            const el = n.parentElement;
            if (!text || !el || el.closest('style, script')) continue;
            if (![...el.getClientRects()].some(r => r.width > 0 && r.height > 0)) continue;
            let px = parseFloat(getComputedStyle(el).fontSize);
            if (el.closest('svg')) { const m = el.getScreenCTM(); px *= Math.hypot(m.a, m.b); }
            if (px < best.px) best = {px: Math.round(px * 10) / 10, text: text.slice(0, 40)};
        }
    }
    return best;
}"""
# Outputs wider than their cell (what makes a horizontal scrollbar appear), and the heights of
# the outputs of minigrad.viz: widgets (steppers, explorers) and the others.
LAYOUT = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const outputs = [...panel.content.node.querySelectorAll('.jp-OutputArea-output')];
    const ours = outputs.filter(o => o.querySelector('.minigrad-graph, .mg-dashboard, .mg-explorer, .mg-grids, .widget-vbox'));
    const scroller = panel.content.node.querySelector('.jp-WindowedPanel-outer') || panel.content.node;
    return {
        overflowing: outputs.filter(o => o.scrollWidth > o.clientWidth + 1).map(o => o.textContent.slice(0, 60)),
        widgets: ours.filter(o => o.querySelector('.widget-vbox')).map(o => Math.round(o.getBoundingClientRect().height)),
        pictures: ours.map(o => Math.round(o.getBoundingClientRect().height)),
        tallest: Math.max(0, ...ours.map(o => Math.round(o.getBoundingClientRect().height))),
        outputWidth: Math.max(0, ...outputs.map(o => Math.round(o.getBoundingClientRect().width))),
        visible: Math.round(scroller.getBoundingClientRect().height),
        // a chart's plot drawn outside its frame (JupyterLab's svg {height: auto} once made it square)
        spilling: [...panel.content.node.querySelectorAll('.mg-chart svg')].filter(svg => {
            const r = svg.getBoundingClientRect(), f = svg.parentElement.getBoundingClientRect();
            return r.height > 0 && (r.bottom > f.bottom + 1 || r.right > f.right + 1);
        }).length,
    };
}"""
# How much of an element the audience sees: the share of its area inside the notebook's view.
ON_SCREEN = """(selector) => {
    const panel = window.jupyterapp.shell.currentWidget;
    const el = [...panel.content.node.querySelectorAll(selector)].find(e => e.getBoundingClientRect().width > 0);
    if (!el) return null;
    const view = (panel.content.node.querySelector('.jp-WindowedPanel-outer') || panel.content.node).getBoundingClientRect();
    const r = el.getBoundingClientRect();
    const w = Math.max(0, Math.min(r.right, view.right) - Math.max(r.left, view.left));
    const h = Math.max(0, Math.min(r.bottom, view.bottom, window.innerHeight) - Math.max(r.top, view.top));
    return r.width * r.height ? (w * h) / (r.width * r.height) : null;
}"""
# Counts the dashboard's frames as they arrive (each update replaces its output with a new view),
# and how much of each the audience sees 150 ms after it arrived (the view scrolls itself in).
COUNT_FRAMES = """() => {
    window.mgFrames = [];
    window.mgShares = [];
    const share = el => {
        const panel = window.jupyterapp.shell.currentWidget;
        const view = (panel.content.node.querySelector('.jp-WindowedPanel-outer') || panel.content.node)
            .getBoundingClientRect();
        const r = el.getBoundingClientRect();
        const w = Math.max(0, Math.min(r.right, view.right) - Math.max(r.left, view.left));
        const h = Math.max(0, Math.min(r.bottom, view.bottom, window.innerHeight) - Math.max(r.top, view.top));
        return r.width * r.height ? (w * h) / (r.width * r.height) : null;
    };
    new MutationObserver(mutations => {
        for (const m of mutations) for (const n of m.addedNodes) {
            const view = n.nodeType === 1 && (n.matches('.mg-dashboard') ? n : n.querySelector('.mg-dashboard'));
            if (view && view.querySelector('.mg-status')) {
                window.mgFrames.push(view.querySelector('.mg-status').textContent);
                setTimeout(() => { if (view.isConnected) window.mgShares.push(share(view)); }, 150);
            }
        }
    }).observe(document.body, {childList: true, subtree: true});
}"""


def wait_for_kernel(page) -> None:
    """Wait until the notebook's kernel is idle, accepting the kernel JupyterLab proposes if it asks."""
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
        pytest.fail(f"the notebook shows no {what} within {timeout_ms / 1000:.0f} s")
    return locator


def wait_idle(page, timeout: float = RUN_ALL_TIMEOUT) -> dict:
    """Wait until every cell ran (or one failed) and the kernel is idle three polls in a row."""
    deadline, settled, state = time.monotonic() + timeout, 0, {}
    while time.monotonic() < deadline:
        time.sleep(0.5)
        state = page.evaluate(NOTEBOOK_STATE)
        finished = state["kernel"] == "idle" and (state["pending"] == 0 or state["errors"])
        settled = settled + 1 if finished else 0
        if settled >= 3:
            return state
    pytest.fail(f"the notebook did not finish within {timeout} s: {state}")


def sidebar(page, collapsed: bool) -> None:
    """Open or collapse JupyterLab's left sidebar, as the lecturer would."""
    if page.evaluate("window.jupyterapp.shell.leftCollapsed") != collapsed:
        page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
    page.wait_for_function(f"window.jupyterapp.shell.leftCollapsed === {str(collapsed).lower()}")
    time.sleep(0.5)  # JupyterLab lays the panels out on the next frames


def shoot(page, what: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{what}.png"
    page.screenshot(path=str(path))
    return path


def run_code(page, code: str) -> None:
    """Append a code cell with ``code`` at the end of the notebook and run it, as a learner would."""
    page.evaluate("""(code) => {
        const panel = window.jupyterapp.shell.currentWidget;
        const notebook = panel.content;
        notebook.activeCellIndex = notebook.widgets.length - 1;
        window.jupyterapp.commands.execute('notebook:insert-cell-below');
        notebook.activeCell.model.sharedModel.setSource(code);
        window.jupyterapp.commands.execute('notebook:run-cell');
    }""", code)
    time.sleep(1)
    state = wait_idle(page, 120)
    assert not state["errors"], "cells raised: " + "; ".join(state["errors"])


@pytest.mark.parametrize("lesson", chosen_lessons())
def test_lesson_as_projected(lesson, browser, jupyter, measures, capsys):
    if lesson not in LESSONS:
        pytest.fail(f"MINIGRAD_BROWSER_LESSONS: {lesson} is not one of {sorted(LESSONS)}")
    base, token = jupyter
    shows = LESSONS[lesson]
    name = f"lessons/{lesson}.ipynb"
    page = browser.new_page(**PROJECTOR)
    page.set_default_timeout(WAIT_MS)
    found = measures.setdefault(lesson, {})
    try:
        page.goto(f"{base}/lab/tree/{name}?token={token}&reset")
        wait_for_kernel(page)
        time.sleep(1)  # what JupyterLab changes on opening, it changes now
        state = page.evaluate(NOTEBOOK_STATE)
        found["modified on opening"] = state["dirty"]
        assert not state["dirty"], "opening the lesson marked it modified"
        assert page.locator(".jp-mod-dirty").count() == 0, "opening the lesson put the modified dot on its tab"
        page.evaluate(COUNT_FRAMES)
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        state = wait_idle(page)
        assert not state["errors"], "cells raised: " + "; ".join(state["errors"])
        assert state["pending"] == 0 and state["cells"] > 0

        for collapsed in (False, True):  # as JupyterLab opens, then as a lecturer makes room
            sidebar(page, collapsed)
            where = "collapsed" if collapsed else "open"
            smallest, layout = page.evaluate(SMALLEST_TEXT), page.evaluate(LAYOUT)
            found[f"sidebar {where}"] = {"smallest text px": smallest["px"], "smallest text": smallest["text"],
                                         "tallest output px": layout["tallest"], "widgets px": layout["widgets"],
                                         "output width px": layout["outputWidth"], "notebook view px": layout["visible"]}
            assert smallest["px"] >= MIN_TEXT_PX, f"sidebar {where}: text shown at {smallest}"
            assert not layout["overflowing"], f"sidebar {where}: outputs wider than the cell: {layout['overflowing']}"
            assert not layout["spilling"], f"sidebar {where}: {layout['spilling']} charts draw outside their frame"
            assert all(h <= MAX_WIDGET_PX for h in layout["pictures"]), \
                f"sidebar {where}: a picture is taller than the projected notebook: {layout['pictures']} px"
        shoot(page, f"{lesson}-run")
        assert not page.locator(".Toastify__toast").count(), \
            "a toast covers the notebook: " + page.locator(".Toastify__toast").first.inner_text()
        if "dashboard" in shows:
            check_dashboard(page, lesson, found)
        if "stepper" in shows:
            check_stepper(page, lesson)
        if "explorer" in shows:
            check_explorer(page, lesson)
        if "sliders" in shows:
            check_sliders(page, lesson)
        check_reopened(page, base, token, lesson, found)
    finally:  # on failure too: the picture shows what went wrong
        shot = shoot(page, f"{lesson}-last")
        page.close()
        with capsys.disabled():
            print(f"\n{lesson}: {json.dumps(found)}\nscreenshot: {shot}")


def check_dashboard(page, lesson: str, found: dict) -> None:
    """A dozen frames during run-all; then the training cell run again, as the lecturer runs it
    with its code on screen (Shift+Enter with the sidebar open, Ctrl+Enter with it collapsed):
    the view brings itself on screen."""
    frames = page.evaluate("window.mgFrames")
    least = MIN_FRAMES.get(lesson, 12)
    assert len(set(frames)) >= least, f"the dashboard showed {len(set(frames))} frames: {frames}"
    if lesson == "00_tour":
        first = next(f for f in frames if "accuracy" in f)
        accuracy = float(first.split("accuracy ")[1].split(" ")[0])
        found["first frame"] = first
        assert accuracy < 0.7, f"the first frame already shows the boundary learned: {first}"
    index = page.evaluate(f"""() => {PANEL}.content.widgets.findIndex(
        c => c.model.type === 'code' && c.node.querySelector('.mg-dashboard'))""")
    assert index >= 0, "no dashboard output"
    for keys, collapsed in (("Shift+Enter", False), ("Control+Enter", True)):
        sidebar(page, collapsed)
        where = "collapsed" if collapsed else "open"
        page.evaluate(f"""(i) => {{ const nb = {PANEL}.content; nb.activeCellIndex = i; nb.mode = 'command';
            nb.widgets[i].node.scrollIntoView({{block: 'start'}}); }}""", index)
        time.sleep(0.5)
        page.evaluate("window.mgShares = []")
        page.keyboard.press(keys)
        time.sleep(1)
        wait_idle(page, 120)
        shares = [x for x in page.evaluate("window.mgShares") if x is not None]
        shoot(page, f"{lesson}-dashboard-{keys.split('+')[0].lower()}")
        assert shares, f"after {keys} no frame of the dashboard was seen while training"
        settled = shares[1:] or shares  # the first frame ("waiting for the first step") brings it in
        found[f"sidebar {where}"]["dashboard on screen"] = {"after": keys, "least": round(min(settled), 2), "mean": round(
            sum(settled) / len(settled), 2), "samples": len(shares)}
        assert min(settled) >= 0.95, \
            f"sidebar {where}, after {keys}: a frame of the dashboard was only {min(settled):.0%} on screen"


def check_stepper(page, lesson: str) -> None:
    """The first stepper: keyboard, mouse, play; while it plays the running node stays in view."""
    assert "Error displaying widget" not in page.locator(".jp-Notebook").inner_text()
    stepper = visible(page.locator(".jp-OutputArea-output .widget-vbox", has=page.locator("button", has_text="play")).first,
                      "BackwardStepper widget (a box with a play button)")
    stepper.scroll_into_view_if_needed()
    visible(stepper.locator(".widget-html svg:visible").first, "picture in the BackwardStepper")
    readout = stepper.locator(".widget-readout")
    assert readout.inner_text().strip() == "1" and "Step 1 of" in stepper.inner_text()

    def changes(action, what: str) -> None:
        before = stepper.locator(".widget-html").first.inner_html()
        action()
        try:
            page.wait_for_function("([el, html]) => el.innerHTML !== html",
                                   arg=[stepper.locator(".widget-html").first.element_handle(), before], timeout=WAIT_MS)
        except Exception:  # noqa: BLE001  (a timeout: say which action did nothing)
            pytest.fail(f"the stepper's picture did not change after {what}")

    changes(lambda: (stepper.locator(".noUi-handle").focus(), page.keyboard.press("ArrowRight")), "ArrowRight")
    assert readout.inner_text().strip() == "2"
    handle, track = stepper.locator(".noUi-handle").bounding_box(), stepper.locator(".noUi-base").bounding_box()

    def drag() -> None:
        page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
        page.mouse.down()
        page.mouse.move(track["x"] + track["width"] + 20, handle["y"] + handle["height"] / 2, steps=8)
        page.mouse.up()

    changes(drag, "dragging the slider")
    last = int(readout.inner_text().strip())
    assert last > 2, f"dragging to the end left the slider at {last}"
    changes(lambda: (stepper.locator(".noUi-handle").focus(), page.keyboard.press("Home")), "the Home key")
    play = stepper.locator("button", has_text="play")
    assert "Play the backward pass" in (play.get_attribute("title") or ""), "play has no tooltip"
    stepper.scroll_into_view_if_needed()
    changes(play.click, "pressing play")
    out_of_view = []
    for _ in range(min(last, 6)):  # the running node, drawn bold in orange, as it moves
        share = page.evaluate(ON_SCREEN, ".widget-html .node.current")
        if share is not None and share < 0.99:
            out_of_view.append((readout.inner_text().strip(), round(share, 2)))
        time.sleep(0.7)
    stepper.locator("button", has_text="stop").click()
    shoot(page, f"{lesson}-stepper-played")
    assert not out_of_view, f"while playing, the running node was out of view at steps {out_of_view}"


EXPLORERS = """from minigrad.viz import function_explorer
shifted = function_explorer(lambda x, a: (x + a).sqrt(), x_range=(0, 4), params={"a": (-3.0, 3.0, 1.0)})
display(shifted)
function_explorer(lambda x: x.log(), x_range=(-1, 3))"""


def check_explorer(page, lesson: str) -> None:
    """The lesson's explorer moves; a learner's function defined on part of the range is drawn
    there, and the widget says in words where it is not."""
    explorer = visible(page.locator(".jp-OutputArea-output .widget-vbox", has=page.locator(".mg-explorer")).first,
                       "function explorer")
    tracks = [t.bounding_box() for t in explorer.locator(".noUi-base").all()]
    assert len({round(t["x"]) for t in tracks}) == 1, f"the sliders do not line up: {tracks}"
    assert "f_prime" not in explorer.inner_text()
    run_code(page, EXPLORERS)
    cell = page.locator(".jp-Cell").last
    shifted, log = cell.locator(".widget-vbox", has=page.locator(".mg-explorer")).all()[:2]
    assert "undefined" not in shifted.inner_text()
    shifted.locator(".noUi-handle").first.focus()
    page.keyboard.press("Home")  # a = -3: undefined for x < 3
    message = visible(shifted.locator(".mg-explorer-message"), "message of the explorer at a = -3")
    page.wait_for_function("el => el.textContent.includes('a = -3')", arg=message.element_handle())
    text = message.inner_text()
    assert "sqrt is undefined where x + a < 0" in text and "at a = -3" in text and "defined" in text, text
    assert shifted.locator("polyline").count() >= 2, "the defined part is not drawn"
    assert "sqrt is" not in log.inner_text() and "log is undefined where x ≤ 0" in log.inner_text()
    assert "Traceback" not in cell.inner_text() and "Error" not in cell.inner_text()
    shifted.scroll_into_view_if_needed()
    shoot(page, f"{lesson}-explorer-undefined")


def check_reopened(page, base: str, token: str, lesson: str, found: dict) -> None:
    """Save, restart the kernel, reload: every widget shows its last picture, no error line, and
    the lesson is not marked modified (ipywidgets marks a notebook modified when it restores
    saved widget state: the course's settings save none, the static copies show the pictures)."""
    page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(f"() => !{PANEL}.model.dirty", timeout=WAIT_MS)
    for kernel in api(base, token, "/api/kernels"):
        api(base, token, f"/api/kernels/{kernel['id']}/restart", method="POST")
    page.reload()
    wait_for_kernel(page)
    time.sleep(3)  # what the widget manager and JupyterLab change after a reload, they change now
    found["modified after reopening"] = page.evaluate(NOTEBOOK_STATE)["dirty"]
    assert not found["modified after reopening"], "saved, restarted and reloaded, the lesson shows as modified"
    assert page.locator(".jp-mod-dirty").count() == 0, "a tab shows the modified dot"
    text = page.locator(".jp-Notebook").inner_text()
    assert "Error displaying widget" not in text, "after a reload a widget shows an error instead of its picture"
    pictures = page.locator("[class*='-static'] svg:visible, [class*='-static'] .mg-grids:visible, "
                            "[class*='mg-sliders-'][class*='-static'] pre:visible")  # lesson 07's line of timings
    if LESSONS[lesson] & {"stepper", "explorer", "sliders"}:
        visible(pictures.first, "widget's last picture after a restart and reload").scroll_into_view_if_needed()
    shoot(page, f"{lesson}-reopened")


SLIDER_CHANGES = {  # the slider moved one step to the right, and what the picture then says
    "06_broadcasting": (2, "(3, 1) + (1, 4) -> (3, 4)"),  # b_rows 0 -> 1
    "07_numba": (0, "1,000,000 elements"),
    "11_cnn": (1, "// 2 + 1"),  # stride 1 -> 2
}


def check_sliders(page, lesson: str) -> None:
    """A lesson's sliders (minigrad.viz.grids): a key moves one, and the picture is redrawn."""
    box = visible(page.locator(".jp-OutputArea-output .widget-vbox", has=page.locator(".widget-gridbox")).first,
                  "sliders above a picture")
    box.scroll_into_view_if_needed()
    index, expected = SLIDER_CHANGES[lesson]
    box.locator(".noUi-handle").nth(index).focus()
    page.keyboard.press("ArrowRight")
    visible(box.locator(".widget-html", has_text=expected), f"picture redrawn ({expected!r})", WAIT_MS)
    shoot(page, f"{lesson}-sliders")
