"""Build hook (the rest of the configuration is in pyproject.toml).

The course's lessons and worksheet templates live at the repository root (``lessons/``,
``exercises/``: the source of truth, next to ``solutions/``). A wheel ships a copy of them
inside the package, ``minigrad/course/content/``, so that ``minigrad-course init`` and
``minigrad-grade`` work without a checkout. Editable installs use the checkout's folders.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
CONTENT = ("lessons", "exercises")  # never solutions/


class BuildWithCourse(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for folder in CONTENT:
            target = Path(self.build_lib) / "minigrad" / "course" / "content" / folder
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            notebooks = sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb"))
            if not notebooks:
                raise FileNotFoundError(f"{ROOT / folder} holds no notebooks: build from a checkout or an sdist")
            for notebook in notebooks:
                shutil.copyfile(notebook, target / notebook.name)


setup(cmdclass={"build_py": BuildWithCourse})
