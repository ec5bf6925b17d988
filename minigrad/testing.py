"""``minigrad.testing``: ``assert_close`` and ``make_tensor``, as in ``torch.testing``.

    minigrad.testing.assert_close(model(x), expected)        # float32: rtol 1.3e-6, atol 1e-5
    x = minigrad.testing.make_tensor(3, 4, dtype=minigrad.float32, device="cpu", low=-1, high=1)

A learner's tests call these, so they keep PyTorch's rules and messages: the default
tolerances of each dtype (integers and bool compare exactly), the shape, dtype, device and
stride checks, sequences and mappings compared item by item, Python numbers, and NumPy
arrays only against NumPy arrays. ``actual`` and ``expected`` are close where
``|actual - expected| <= atol + rtol * |expected|`` (``expected`` is the reference) or both
are the same infinity, or both NaN with ``equal_nan=True``. A failure is an AssertionError:

    Tensor-likes are not close!

    Mismatched elements: 1 / 3 (33.3%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.25 at index (1,) (up to 1.3e-06 allowed)

Where minigrad differs: it has no float16, complex, sparse or quantized tensors, so a NumPy
array of a dtype it lacks cannot be compared (a TypeError, as for any unsupported input),
and ``memory_format`` in ``make_tensor`` only makes a contiguous copy (every minigrad tensor
is row-major).
"""
from __future__ import annotations

import cmath
import collections.abc
import contextlib
import math
import warnings
from typing import Any, Callable

import numpy as np

from minigrad import dtypes
from minigrad.creation import as_tensor, empty, randint, tensor
from minigrad._tensor import Tensor
from minigrad.type_info import finfo, iinfo, promote_types

__all__ = ["assert_close", "make_tensor", "assert_allclose"]

# PyTorch's default (rtol, atol) of each dtype; any other dtype compares exactly.
_DTYPE_PRECISIONS = {dtypes.float32: (1.3e-6, 1e-5), dtypes.float64: (1e-7, 1e-7)}
# A Python number is compared as a tensor of this dtype would be (complex as complex128).
_NUMBER_PRECISIONS = {int: (0.0, 0.0), float: (1e-7, 1e-7), complex: (1e-7, 1e-7)}


class _Failure(Exception):
    """A failed check: the exception type and message to raise (with where, in nested inputs)."""

    def __init__(self, type_: type[Exception], msg: str, id: tuple = ()) -> None:
        super().__init__(msg)
        self.type, self.msg, self.id = type_, msg, id

    def to_error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    """This kind of pair cannot hold the inputs: try the next kind."""


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise an AssertionError unless ``actual`` and ``expected`` are close (see the module docstring).

    ``rtol`` and ``atol`` go together (a ValueError for one alone). ``msg`` replaces the message,
    or, if callable, gets the generated message and returns the one to raise.
    """
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride)
    try:
        comparisons = _originate(actual, expected, (), options)
    except _Failure as failure:
        raise failure.to_error() from None
    failures = []
    for compare, describe in comparisons:
        try:
            compare()
        except _Failure as failure:
            failures.append(failure)
        except RuntimeError:
            raise
        except Exception as error:  # (PyTorch's type for anything unexpected, with the cause above it)
            raise RuntimeError(f"Comparing {describe} failed with the exception above: are rtol and atol "
                               "numbers?") from error
    if failures:
        raise failures[0].to_error(msg) from None


def _originate(actual, expected, id: tuple, options: dict) -> list:
    """(compare, description) for each pair of leaves, walking sequences and mappings together."""
    sequences = all(isinstance(x, collections.abc.Sequence) and not isinstance(x, str) for x in (actual, expected))
    if sequences:
        if len(actual) != len(expected):
            raise _Failure(AssertionError,
                           f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", id)
        return [c for i in range(len(actual)) for c in _originate(actual[i], expected[i], (*id, i), options)]
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Failure(AssertionError,
                           "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                           f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}", id)
        keys = actual_keys
        with contextlib.suppress(Exception):  # the first failure is reported: make it the same each run
            keys = sorted(keys)
        return [c for key in keys for c in _originate(actual[key], expected[key], (*id, key), options)]
    for pair in (_none_pair, _boolean_pair, _number_pair, _tensor_pair):
        try:
            return [(pair(actual, expected, id, **options), f"{type(actual)} and {type(expected)}")]
        except _Unsupported:
            continue
        except (_Failure, RuntimeError):
            raise
        except Exception as error:  # (PyTorch's type for anything unexpected, with the cause above it)
            raise RuntimeError(f"Preparing to compare {type(actual).__name__} {actual} and "
                               f"{type(expected).__name__} {expected} at item {''.join(str([i]) for i in id)} "
                               "failed with the exception above") from error
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} "
                              f"and {type(expected)}.", id)


def _tolerances(defaults: list[tuple[float, float]], rtol, atol, id: tuple) -> tuple:
    """The tolerances given, or the loosest defaults of the inputs' dtypes if neither is given."""
    if (rtol is None) ^ (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                   f"but got no {'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    return max(r for r, _ in defaults), max(a for _, a in defaults)


def _none_pair(actual, expected, id: tuple, **_) -> Callable[[], None]:
    if not (actual is None or expected is None):
        raise _Unsupported

    def compare() -> None:
        if not (actual is None and expected is None):
            raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id)
    return compare


def _boolean_pair(actual, expected, id: tuple, **_) -> Callable[[], None]:
    if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)

    def compare() -> None:
        if actual is not expected:
            raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id)
    return compare


def _number_pair(actual, expected, id: tuple, *, rtol, atol, equal_nan: bool, check_dtype: bool,
                 **_) -> Callable[[], None]:
    """Python numbers (and NumPy scalars, as Python numbers); ``check_dtype`` compares their types."""
    if not all(isinstance(x, (int, float, complex, np.number)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    if isinstance(actual, bool) or isinstance(expected, bool):  # (a RuntimeError in PyTorch too)
        raise RuntimeError(f"assert_close cannot compare the bool and the number in {actual!r} and {expected!r}: "
                           "compare a bool with a bool, or convert it with int() or float()")
    rtol, atol = _tolerances([_NUMBER_PRECISIONS[type(x)] for x in (actual, expected)], rtol, atol, id)

    def compare() -> None:
        if check_dtype and type(actual) is not type(expected):
            raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id)
        if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
            return
        raise _Failure(AssertionError, _scalar_mismatch(actual, expected, rtol, atol), id)
    return compare


def _tensor_pair(actual, expected, id: tuple, *, allow_subclasses: bool, rtol, atol, equal_nan: bool,
                 check_device: bool, check_dtype: bool, check_layout: bool, check_stride: bool,
                 **_) -> Callable[[], None]:
    """Tensors, or two inputs of related types that ``as_tensor`` takes (two NumPy arrays)."""
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    try:
        actual, expected = (x if isinstance(x, Tensor) else as_tensor(x) for x in (actual, expected))
    except Exception:
        raise _Unsupported from None
    defaults = [_DTYPE_PRECISIONS.get(x.dtype, (0.0, 0.0)) for x in (actual, expected)]
    rtol, atol = _tolerances(defaults, rtol, atol, id)

    def mismatch(attribute: str, actual_value, expected_value) -> _Failure:
        return _Failure(AssertionError, f"The values for attribute '{attribute}' do not match: "
                                        f"{actual_value} != {expected_value}.", id)

    def compare() -> None:
        if actual.shape != expected.shape:
            raise mismatch("shape", actual.shape, expected.shape)
        # (every minigrad tensor is strided: check_layout has no other layout to find)
        if check_stride and actual.stride() != expected.stride():
            raise mismatch("stride()", actual.stride(), expected.stride())
        if check_device and actual.device != expected.device:
            raise mismatch("device", actual.device, expected.device)
        if check_dtype and actual.dtype != expected.dtype:
            raise mismatch("dtype", actual.dtype, expected.dtype)
        a, e = actual._data, expected._data
        if a.dtype != e.dtype:  # (check_dtype=False) compare in the promoted dtype
            common = promote_types(actual.dtype, expected.dtype).numpy
            a, e = a.astype(common), e.astype(common)
        matches = _isclose(a, e, rtol, atol, equal_nan)
        if matches.all():
            return
        if a.ndim == 0:
            raise _Failure(AssertionError, _scalar_mismatch(a.item(), e.item(), rtol, atol), id)
        raise _Failure(AssertionError, _tensor_mismatch(a, e, matches, rtol, atol), id)
    return compare


def _isclose(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """``minigrad.isclose`` step for step as PyTorch's: integers and bools in the default float dtype,
    floats in their own dtype (NumPy's isclose differs for integers and at the boundary)."""
    if rtol < 0 or atol < 0:
        raise RuntimeError(f"{'rtol' if rtol < 0 else 'atol'} must be greater than or equal to zero, "
                           f"but got {rtol if rtol < 0 else atol}")
    close = a == e
    if equal_nan and a.dtype.kind == "f":
        close |= np.isnan(a) & np.isnan(e)
    if rtol == 0 and atol == 0:
        return close
    if a.dtype.kind != "f":
        a, e = a.astype(dtypes.default_float.numpy), e.astype(dtypes.default_float.numpy)
    with np.errstate(all="ignore"):
        allowed = a.dtype.type(atol) + np.abs(a.dtype.type(rtol) * e)
        error = np.abs(a - e)
    return close | (np.isfinite(error) & (error <= allowed))


def _mismatch_message(identifier: str, extra: str, abs_diff, abs_idx, rel_diff, rel_idx, rtol, atol) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind: str, diff, idx, tol) -> str:
        if idx is None:
            text = f"{kind.title()} difference: {diff}"
        else:
            text = f"Greatest {kind} difference: {diff} at index {idx}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    text = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    return (text + line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)).strip()


def _scalar_mismatch(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, rel_diff, None,
                             rtol, atol)


def _tensor_mismatch(a: np.ndarray, e: np.ndarray, matches: np.ndarray, rtol, atol) -> str:
    """How many elements differ, and the greatest differences among them, with their indices."""
    shape, total, mismatched = matches.shape, matches.size, matches.size - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, e, matches = a.ravel(), e.ravel(), matches.ravel()
    if a.dtype.kind != "f":  # PyTorch widens integers to int64, and divides them in the default float dtype
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[matches] = 0
        quotient = dtypes.default_float.numpy if a.dtype.kind != "f" else a.dtype
        rel_diff = abs_diff.astype(quotient) / np.abs(e).astype(quotient)
    rel_diff[matches] = 0
    abs_idx, rel_idx = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))  # (the first NaN, or first greatest)
    return _mismatch_message("Tensor-likes", extra, abs_diff[abs_idx].item(), _unravel(abs_idx, shape),
                             rel_diff[rel_idx].item(), _unravel(rel_idx, shape), rtol, atol)


def _unravel(flat_index: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat_index, shape))


_INTEGRAL = (dtypes.bool_, dtypes.uint8, dtypes.int32, dtypes.int64)
_FLOATING = (dtypes.float32, dtypes.float64)


def make_tensor(*shape: int | tuple[int, ...] | list[int], dtype: dtypes.dtype, device, low: float | None = None,
                high: float | None = None, requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format=None) -> Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)``: test inputs in one call.

    The defaults are PyTorch's: bool [0, 2), unsigned [0, 10), signed integers [-9, 10), floats
    [-9, 9); ``low`` and ``high`` are clamped to what the dtype holds. ``noncontiguous`` returns
    every other column of a twice-as-wide tensor; ``exclude_zero`` replaces zeros by 1 (integers,
    bool) or the dtype's smallest normal number (floats).
    """
    def low_high(default_low: float, default_high: float, lowest: float, highest: float) -> tuple:
        lo = default_low if low is None else low
        hi = default_high if high is None else high
        if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
        if lo == hi and dtype in _FLOATING:
            warnings.warn("Passing `low==high` to `minigrad.testing.make_tensor` for floating types is deprecated "
                          "(as in PyTorch since 2.1): use `minigrad.full(...)` instead.", FutureWarning, stacklevel=3)
        elif lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        elif hi < lowest or lo >= highest:
            raise ValueError(f"The value interval specified by `low` and `high` is [{lo}, {hi}), "
                             f"but {dtype} only supports [{lowest}, {highest})")
        lo, hi = min(max(lo, lowest), highest), min(max(hi, lowest), highest)
        return (math.ceil(lo), math.ceil(hi)) if dtype in _INTEGRAL else (lo, hi)

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and dtype in _INTEGRAL:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice as wide, then every other column: non-identical values, and an offset of 1
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is dtypes.bool_:
        result = randint(*low_high(0, 2, 0, 2), shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:  # (randint cannot draw int64's maximum: its bound is exclusive)
        info = iinfo(dtype)
        result = randint(*low_high(-9, 10, info.min, info.max + (dtype is not dtypes.int64)), shape,
                         device=device, dtype=dtype)
    elif dtype in _FLOATING:
        info = finfo(dtype)
        lo, hi = low_high(-9, 9, info.min, info.max)
        result = empty(shape, device=device, dtype=dtype)
        if hi - lo >= info.max:  # (the width itself would overflow: draw half the range, then double)
            result.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            result.uniform_(lo, hi)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by minigrad.testing.make_tensor(): "
                        "pass one of minigrad.bool, uint8, int32, int64, float32, float64")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone()
    if exclude_zero:
        result[result == 0] = 1 if dtype in _INTEGRAL else finfo(dtype).tiny
    if dtype in _FLOATING:
        result.requires_grad = requires_grad
    return result


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated in PyTorch since 1.12 (it warns): ``assert_close`` with looser float tolerances,
    no dtype check, NaN equal to NaN, and non-tensor inputs made tensors first."""
    warnings.warn("`minigrad.testing.assert_allclose()` is deprecated since 1.12 (as in PyTorch) and will be "
                  "removed in a future release. Please use `minigrad.testing.assert_close()` instead.",
                  FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        loose = {dtypes.float32: (1e-4, 1e-5), dtypes.float64: (1e-5, 1e-8)}
        rtol, atol = (max(t) for t in zip(*(loose.get(x.dtype, (0.0, 0.0)) for x in (actual, expected))))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
