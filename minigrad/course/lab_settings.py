"""The JupyterLab settings that ``minigrad-course open`` starts JupyterLab with.

JupyterLab reads default values for its settings from ``overrides.json`` in its
application settings directory; a user's own settings still win over them. We
write ours into a folder of their own and point ``--LabApp.app_settings_dir`` at
it, so nothing of the machine's JupyterLab setup is changed (the overrides the
installation already has are kept, ours added on top):

- widget state *not* saved with the notebook. jupyterlab-manager (ipywidgets 8) marks a
  notebook modified for every widget model it registers, those it restores from a saved
  notebook's state included (``register_model`` calls ``setDirty`` when ``saveState`` is
  on), so a lesson saved with widget state showed as modified as soon as it was reopened.
  Our widgets keep a static copy of their last picture below them instead (hidden while the
  widget is alive; see ``minigrad.viz.style.hide_lost_widget``): after a kernel restart and a
  reload the audience sees that picture, not "Error displaying widget";
- JupyterLab's news toast off (it covers outputs on a first launch in class), and
  no update check (the course runs offline);
- code lines wrapped, so no line of a lesson is cut off on a projector;
- in a git checkout of the course, autosave off: outputs of a lecture never land in
  the repository's lessons/ by themselves (saving stays possible, on purpose).

Why a lesson showed as modified the moment it opened: as its kernel starts, JupyterLab
writes the kernel's ``kernelspec`` (display name "Python 3 (ipykernel)") and its full
``language_info`` (with the Python version) into the notebook's metadata, and any change
marks the notebook modified; the committed lessons carry a short, machine-independent
form of both. ``CourseContentsManager`` hands JupyterLab each notebook with the metadata
the kernel will report on this machine, so there is nothing to change; the file on disk is
untouched until someone saves.
"""
from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
from pathlib import Path

try:
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager as _Contents
except ImportError:  # no Jupyter: only the settings are of use
    _Contents = object

OVERRIDES = {
    "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": False},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension:tracker": {
        "codeCellConfig": {"lineNumbers": False, "lineWrap": True},
        "markdownCellConfig": {"lineNumbers": False, "lineWrap": True},
        "rawCellConfig": {"lineNumbers": False, "lineWrap": True},
    },
}
NO_AUTOSAVE = {"@jupyterlab/docmanager-extension:plugin": {"autosave": False}}


def is_checkout(folder: Path) -> bool:
    """True for the course's own repository (its lessons are committed without outputs)."""
    return (folder / ".git").exists() and (folder / "solutions").is_dir()


def overrides(folder: Path) -> dict:
    """The settings for a course in ``folder``: ``OVERRIDES``, plus autosave off in a checkout."""
    settings = json.loads(json.dumps(OVERRIDES))
    if is_checkout(folder):
        settings.update(NO_AUTOSAVE)
    return settings


def _installed_overrides() -> dict:
    """The overrides.json of this JupyterLab installation's own settings directory, if any."""
    try:
        from jupyterlab.commands import get_app_dir
    except ImportError:
        return {}
    path = Path(get_app_dir()) / "settings" / "overrides.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def write_settings(folder: Path, target: Path) -> Path:
    """Write ``overrides.json`` for the course in ``folder`` into ``target`` (created); return it."""
    settings = _installed_overrides()
    for plugin, values in overrides(folder).items():
        merged = dict(settings.get(plugin, {}))
        merged.update(values)
        settings[plugin] = merged
    target.mkdir(parents=True, exist_ok=True)
    path = target / "overrides.json"
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return path


def lab_arguments(folder: Path) -> list[str]:
    """Arguments for ``jupyter lab`` that start it with the course's settings (in a temporary
    folder, removed when this process exits)."""
    target = Path(tempfile.mkdtemp(prefix="minigrad-lab-settings-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    write_settings(Path(folder), target)
    return [f"--LabApp.app_settings_dir={target}", *SERVER_ARGUMENTS]


def kernel_metadata(kernel_name: str = "python3") -> dict:
    """The ``kernelspec`` and ``language_info`` that JupyterLab writes into a notebook when
    this machine's ``kernel_name`` kernel starts (the ipykernel of this Python)."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(kernel_name)
    language = {"name": "python", "version": sys.version.split()[0], "mimetype": "text/x-python",
                "codemirror_mode": {"name": "ipython", "version": sys.version_info[0]},
                "pygments_lexer": f"ipython{sys.version_info[0]}", "nbconvert_exporter": "python",
                "file_extension": ".py"}
    return {"kernelspec": {"name": kernel_name, "display_name": spec.display_name, "language": spec.language},
            "language_info": language}


class CourseContentsManager(_Contents):
    """Jupyter's contents manager, handing out Python notebooks with the metadata their kernel
    will report (``kernel_metadata``), so that opening one does not mark it modified."""

    _kernel_metadata: dict | None = None

    async def get(self, path, content=True, type=None, format=None, **kwargs):  # noqa: A002 (Jupyter's names)
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        if content and model.get("type") == "notebook" and isinstance(model.get("content"), dict):
            metadata = model["content"].setdefault("metadata", {})
            if metadata.get("kernelspec", {}).get("name", "python3") == "python3":
                try:
                    if CourseContentsManager._kernel_metadata is None:
                        CourseContentsManager._kernel_metadata = kernel_metadata()
                except Exception:  # noqa: BLE001  (no python3 kernel here: JupyterLab will ask for one)
                    return model
                metadata.update(json.loads(json.dumps(CourseContentsManager._kernel_metadata)))
        return model


SERVER_ARGUMENTS = [f"--ServerApp.contents_manager_class={__name__}.CourseContentsManager"]
