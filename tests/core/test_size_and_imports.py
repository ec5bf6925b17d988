"""The core stays small and closed: a line budget and an import rule, as tinygrad's CI keeps its own.

Lines are counted by tinygrad's rule (``sz.py``): a line counts if it holds a token
(a name, an operator, a number or a string), so blank lines and comments do not;
docstrings do not count either. ``python -m tests.core.test_size_and_imports`` prints the table.
"""
from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "minigrad" / "core"
CORE_BUDGET = 1500  # the whole core
FILE_BUDGET = 400  # any one of its files
# The learner's reading path: the core in the order its __init__ states, without the files a first
# reading skips (the extension points, PyTorch's rules for a Function's unusual calls, the short way
# a built-in op's plain call is recorded, the long way a node runs in backward, tensor hooks).
READING_SKIPS = ("extension.py", "function_rules.py", "builtin.py", "instrumented.py", "hooks.py")
READING_BUDGET = 1000


def code_lines(source: str) -> int:
    """Lines with a token, docstrings excluded (tinygrad's sz.py, plus the docstring rule)."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docstrings.update(range(node.lineno, node.end_lineno + 1))
    counted = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.OP, tokenize.NAME, tokenize.NUMBER, tokenize.STRING):
            counted.update(line for line in range(token.start[0], token.end[0] + 1) if line not in docstrings)
    return len(counted)


def core_sizes() -> dict[str, int]:
    return {path.name: code_lines(path.read_text()) for path in sorted(CORE.glob("*.py"))}


def reading_order() -> list[str]:
    """The files the core's docstring lists, in its order (``1. ``grad_mode.py``: ...``)."""
    doc = ast.get_docstring(ast.parse((CORE / "__init__.py").read_text()))
    return [line.split("``")[1] for line in doc.splitlines() if line[:1].isdigit() and ". ``" in line]


def test_the_counter_counts_code_not_comments_or_docstrings():
    source = textwrap.dedent('''
        """Module docstring,
        two lines."""
        # a comment
        x = 1

        def f():
            """Its docstring."""
            return (x +
                    2)
    ''')
    assert code_lines(source) == 4  # x = 1, def, return, the continued line


def test_the_core_fits_its_line_budget():
    sizes = core_sizes()
    too_big = {name: n for name, n in sizes.items() if n > FILE_BUDGET}
    assert not too_big, f"core files over {FILE_BUDGET} code lines: {too_big}"
    assert sum(sizes.values()) <= CORE_BUDGET, f"the core has {sum(sizes.values())} code lines (budget {CORE_BUDGET}): {sizes}"


def test_the_reading_path_is_every_core_file_in_order_and_fits_its_budget():
    order, sizes = reading_order(), core_sizes()
    assert sorted(order) == sorted(name for name in sizes if name != "__init__.py"), (
        "minigrad/core/__init__.py's reading order must list every core file once")
    path = [name for name in order if name not in READING_SKIPS]
    total = sum(sizes[name] for name in path)
    assert total <= READING_BUDGET, f"the reading path {path} has {total} code lines (budget {READING_BUDGET})"


def test_the_core_imports_nothing_of_minigrad_outside_itself():
    outside = []
    for path in sorted(CORE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
                modules = [m for m in modules if m.startswith("minigrad")][:1]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                if module.split(".")[0] == "minigrad" and not module.startswith("minigrad.core"):
                    outside.append(f"{path.name}:{node.lineno} imports {module}")
                if module.split(".")[0] not in ("minigrad", "numpy", "__future__") and module not in sys.stdlib_module_names:
                    outside.append(f"{path.name}:{node.lineno} imports {module} (only NumPy and the standard library)")
    assert not outside, "\n".join(outside)


CORE_ALONE = textwrap.dedent('''
    import sys
    import numpy as np
    import minigrad.core as core

    x = core.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    w = core.tensor([[1.5], [-0.5]], requires_grad=True)
    y = ((x * x + x) @ w).exp().sum()
    y.backward()
    X, W = x.detach().numpy(), w.detach().numpy()
    h = (X * X + X) @ W
    e = np.exp(h)  # dy/dh
    assert np.allclose(y.item(), e.sum(), rtol=1e-5)
    assert np.allclose(x.grad.numpy(), (e @ W.T) * (2 * X + 1), rtol=1e-5), x.grad
    assert np.allclose(w.grad.numpy(), (X * X + X).T @ e, rtol=1e-5), w.grad
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("minigrad", "numba"))
    print(" ".join(loaded))
''')


def test_import_minigrad_core_alone_differentiates_without_numba_nn_or_the_op_families():
    env = {**os.environ, "PYTHONPATH": str(CORE.parents[1]) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", CORE_ALONE], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.split()
    assert loaded, "the program printed no modules"
    outside = [m for m in loaded if m != "minigrad" and not m.startswith("minigrad.core")]
    assert not outside, f"import minigrad.core loaded more than the core: {outside}"


def test_import_minigrad_gives_the_library_on_the_core():
    import minigrad
    import minigrad.core

    assert minigrad.Tensor is minigrad.core.Tensor
    x = minigrad.tensor([1.0, 4.0], requires_grad=True)
    x.sqrt().sum().backward()  # an op from a layer, on the core's tensor and engine
    assert x.grad.tolist() == pytest.approx([0.5, 0.25])


if __name__ == "__main__":
    sizes = core_sizes()
    for name, n in sizes.items():
        print(f"{n:6d}  minigrad/core/{name}")
    print(f"{sum(sizes.values()):6d}  total; reading path:",
          sum(sizes[name] for name in reading_order() if name not in READING_SKIPS))
