"""What stage 07's probes share: Numba on one thread for the checks of values, the inputs (odd
shapes, non-contiguous views, float32 and float64), how a kernel's result is compared, and the Numba
functions a learner's kernel reaches."""
from __future__ import annotations

import contextlib
import functools
import inspect

import numpy as np

from minigrad.course.checks import close, fmt

DTYPES = (np.float64, np.float32)


NOT_COMPILED = ("this function is not compiled: add @numba.njit above the kernel it calls (the loop over flat "
                "arrays), so that Numba compiles it to machine code. A plain Python loop over a million elements "
                "runs about a hundred times slower than NumPy")


@contextlib.contextmanager
def _one_thread():
    """Numba's parallel loops on one thread, for the checks of values: a race is ce_no_race's
    business alone, and shows up in the others only by chance."""
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(threads)


def _single_threaded(probe):
    @functools.wraps(probe)
    def wrapper(ns, rng):
        with _one_thread():
            return probe(ns, rng)

    return wrapper


# -- inputs ---------------------------------------------------------------------------------
def _cases(rng: np.random.Generator, dtype, scale: float = 3.0) -> list[tuple[str, np.ndarray]]:
    """Arrays of ``dtype``: odd shapes, two non-contiguous views, and large magnitudes."""
    def draw(*shape):
        return (rng.standard_normal(shape) * scale).astype(dtype)

    big = draw(8)
    big[::2] = dtype(40.0)
    big[1::2] = dtype(-800.0)
    return [
        ("shape (7,)", draw(7)),
        ("shape (3, 5)", draw(3, 5)),
        ("shape (2, 3, 5)", draw(2, 3, 5)),
        ("the non-contiguous view a[:, ::3] of a (6, 10) array", draw(6, 10)[:, ::3]),
        ("the transpose of a (5, 4) array", draw(5, 4).T),
        ("values of 40 and -800", big),
    ]


def _logit_cases(rng: np.random.Generator, dtype) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(description, logits (N, C), targets (N,)) with odd N and C, two of them non-contiguous."""
    out = []
    for label, logits in (("logits of shape (7, 3)", rng.standard_normal((7, 3))),
                          ("logits of shape (1, 10)", rng.standard_normal((1, 10))),
                          ("the non-contiguous view a[:, ::2] of (13, 10) logits", rng.standard_normal((13, 10))),
                          ("transposed (5, 9) logits", rng.standard_normal((9, 5)))):
        logits = (logits * 3).astype(dtype)
        if "::2" in label:
            logits = logits[:, ::2]
        elif "transposed" in label:
            logits = logits.T
        out.append((label, logits, rng.integers(0, logits.shape[1], logits.shape[0])))
    return out


def _with_layout(values: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``values`` in an array laid out like ``like``: C-contiguous, transposed, or a strided view."""
    if like.flags.c_contiguous:
        return np.ascontiguousarray(values)
    if like.flags.f_contiguous:
        return np.asfortranarray(values)
    wide = np.zeros(values.shape[:-1] + (2 * values.shape[-1],), values.dtype)
    wide[..., ::2] = values
    return wide[..., ::2]


def _call(fn, *arrays) -> tuple:
    """``fn(*arrays)`` on copies kept for comparison: (result, whether any input changed)."""
    before = [np.array(a, copy=True) for a in arrays]
    result = fn(*arrays)
    changed = [i for i, (a, b) in enumerate(zip(arrays, before)) if not np.array_equal(a, b, equal_nan=True)]
    return result, changed


def _array_facts(out) -> dict:
    """What a judge needs of a kernel's result: its values, shape and dtype."""
    if hasattr(out, "_data"):  # a minigrad Tensor
        out = out._data
    if not isinstance(out, np.ndarray):
        return {"type": type(out).__name__, "values": None, "shape": None, "dtype": None}
    return {"type": "ndarray", "values": out, "shape": list(out.shape), "dtype": str(out.dtype)}


def _result_problem(kernel: str, case: str, mine: dict, ref: dict, inputs: tuple[str, ...], what: str) -> str | None:
    """Feedback for the first difference between a kernel's result and the reference's, or None."""
    where = f"on {case} ({ref['dtype']})"
    if mine["type"] != "ndarray":
        return f"{kernel} returned a {mine['type']} {where}: return a NumPy array"
    if mine["changed"]:
        name = inputs[mine["changed"][0]]
        return (f"{kernel} changed its input `{name}` {where}: a kernel must never write into its inputs. "
                f"The engine may pass the same {name} array to several nodes, or backward may run twice "
                "(retain_graph); allocate the result with np.empty_like and write there")
    if mine["shape"] != ref["shape"]:
        return f"{kernel} returned shape {tuple(mine['shape'])} {where}, expected {tuple(ref['shape'])}"
    if mine["dtype"] != ref["dtype"]:
        return (f"{kernel} returned {mine['dtype']} {where}, expected {ref['dtype']}: a float32 input must give a "
                "float32 result (half the memory, and what the rest of the graph expects). Allocate the output "
                "with np.empty_like(x), not np.empty(x.shape), whose default dtype is float64")
    if not close(mine["values"], ref["values"], rtol=1e-4 if ref["dtype"] == "float32" else 1e-7):
        hint = ""
        if "contiguous" in case or "transpose" in case:
            hint = (": the earlier, contiguous cases passed, so look at the layout. reshape(-1) of a non-contiguous "
                    "array is a copy, and a kernel writing into a copy never reaches out; np.empty_like of a "
                    "transposed array is transposed too. Make the inputs contiguous first (np.ascontiguousarray)")
        return f"{kernel} {where} gave {fmt(mine['values'])}, expected {what} = {fmt(ref['values'])}{hint}"
    return None


def _code_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _code_names(const)
    return names


def _dispatchers_reached(*functions) -> list:
    """The Numba functions that ``functions`` are or call, found through the global names they use."""
    from numba.core.dispatcher import Dispatcher

    found, seen, stack = [], set(), list(functions)
    while stack and len(seen) < 200:
        f = stack.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if isinstance(f, Dispatcher):
            found.append(f)
            f = f.py_func
        if not inspect.isfunction(f):
            continue
        for name in _code_names(f.__code__):
            value = f.__globals__.get(name)
            if isinstance(value, Dispatcher) or inspect.isfunction(value):
                stack.append(value)
    return found

