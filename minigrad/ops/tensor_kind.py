"""What kind of tensor this is: PyTorch's questions, with the answers of a dense CPU tensor.

PyTorch tensors come in layouts (strided, sparse, ...), on devices (cpu, cuda, mps, xpu ...),
quantized or not, pinned in page-locked memory or not. A minigrad tensor is always a strided
NumPy array in ordinary CPU memory, so code that asks (``x.is_cpu``, ``x.layout``,
``x.get_device()``) gets PyTorch's answers for such a tensor, and code that converts to
a dtype minigrad does not have (``x.bfloat16()``, ``x.short()``) is told what to use instead.
"""
from __future__ import annotations

from minigrad import dtypes
from minigrad.ops.broadcast import type_name
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor


class layout:
    """How a tensor's elements are stored (``torch.layout``). minigrad has one: ``minigrad.strided``,
    a dense array with a stride per dimension (PyTorch also has ``sparse_coo``, ``sparse_csr`` ...)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"minigrad.{self.name}"

    def __reduce__(self):  # pickle as the module-level singleton
        return "strided"


strided = layout("strided")


# -- layout, device and storage: the answers of a dense CPU tensor ---------------------------------
def _strided(self) -> layout:
    return strided


def _true(self) -> bool:
    return True


def _false(self) -> bool:
    return False


def _itemsize(self) -> int:
    """The size of one element in bytes (4 for float32)."""
    return self._data.itemsize


tensor_method("layout")(property(_strided))
tensor_method("itemsize")(property(_itemsize))
tensor_method("is_cpu")(property(_true))
# PyTorch's False for a dense CPU tensor: no other layout, no accelerator, no quantization.
for _name in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_mkldnn", "is_nested", "is_xpu", "is_mps",
              "is_ipu", "is_xla", "is_vulkan", "is_maia", "is_mtia"):
    tensor_method(_name)(property(_false))
del _name


@tensor_method(top_level=True, out=False)
def get_device(self) -> int:
    """The index of the accelerator this tensor is on, or -1 for the CPU (always, in minigrad)."""
    return -1


@tensor_method(top_level=True, out=False)
def is_inference(self) -> bool:
    """Whether this is an *inference tensor*: made inside ``inference_mode`` (or a view or detach() of
    one), which a recorded op refuses to save for backward (see ``autograd/grad_mode.py``)."""
    return self._version_counter.inference


@tensor_method()
def is_pinned(self, device=None) -> bool:
    """Whether the tensor is in page-locked memory for fast copies to a GPU: never, in minigrad."""
    return False


@tensor_method()
def pin_memory(self, device=None) -> Tensor:
    """This tensor: there is no GPU to copy it to faster. (PyTorch without an accelerator raises
    RuntimeError here; minigrad lets GPU-minded code run, as PyTorch's DataLoader(pin_memory=True)
    does without one.)"""
    return self


@tensor_method()
def is_shared(self) -> bool:
    """Whether the tensor is in memory shared between processes: never, in minigrad."""
    return False


@tensor_method()
def share_memory_(self) -> Tensor:
    """This tensor, unchanged: minigrad runs in one process (its DataLoader loads in the main
    one), so nothing needs the memory shared. PyTorch moves the storage to shared memory."""
    return self


@tensor_method()
def dim_order(self, *, ambiguity_check: bool = False) -> tuple:
    """The dimensions from the outermost in memory to the innermost: (0, 1, 2) for a contiguous
    tensor, (1, 0) for a transposed matrix. A dimension of size 1, or two with one stride, could
    go in either place: PyTorch's rule keeps the logical order there, and ``ambiguity_check=True``
    refuses such a tensor instead (RuntimeError)."""
    if ambiguity_check is not True and ambiguity_check is not False:
        raise TypeError(f"dim_order(): the ambiguity_check argument must be a bool, not {type_name(ambiguity_check)}"
                        " (minigrad has no memory formats to list)")
    strides = self.stride()
    if ambiguity_check and (1 in self.shape or any(a == b for a, b in zip(strides, strides[1:]))):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    order, ambiguous = _dims_outermost_first(self, ambiguity_check)
    if ambiguous:
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(order)


def _is_channels_last(t: Tensor) -> bool:
    """PyTorch's channels-last test: a 4-D tensor laid out as (N, H, W, C) in memory."""
    if t.ndim != 4:
        return False
    strides, expected = t.stride(), 1
    for d in (1, 3, 2, 0):
        if t.shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= t.shape[d]
    return True


def _dims_outermost_first(t: Tensor, ambiguity_check: bool) -> tuple:
    """PyTorch's logical-to-physical permutation (``compute_elementwise_output_logical_to_physical_perm``):
    an insertion sort by stride that leaves a pair in place where either stride is 0, and orders
    equal strides by size; and whether, checked, some neighbours in it could swap."""
    n = t.ndim
    contiguous, channels_last = t.is_contiguous(), _is_channels_last(t)
    if n <= 1 or contiguous and not channels_last:
        return list(range(n)), False
    if channels_last and not contiguous:
        return [0, *range(2, n), 1], False
    shape, strides = t.shape, t.stride()

    def should_swap(a: int, b: int) -> int:
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] != strides[b]:
            return -1 if strides[a] < strides[b] else 1
        return 1 if shape[a] > shape[b] else 0

    perm = list(reversed(range(n)))  # sorted innermost first, then reversed
    for i in range(1, n):
        dim1 = i
        for dim0 in reversed(range(i)):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    ambiguous = ambiguity_check and any(should_swap(a, b) != -1 for a, b in zip(perm, perm[1:]))
    return list(reversed(perm)), ambiguous


# -- conversions to the dtypes PyTorch has and minigrad does not ---------------------------------
def _missing_dtype(method: str, dtype: str, instead: str):
    def convert(self) -> Tensor:
        raise TypeError(f"{method}(): minigrad has no {dtype} dtype (it has float16, float32, float64, int32, int64, "
                        f"uint8 and bool): "
                        f"{instead}")

    convert.__doc__ = f"PyTorch's conversion to {dtype}, which minigrad does not have: a TypeError saying what to use."
    tensor_method(method)(convert)


@tensor_method()
def half(self) -> Tensor:
    """A float16 copy (NumPy's half precision)."""
    return self.to(dtypes.float16)


@tensor_method()
def byte(self) -> Tensor:
    """A uint8 copy (images, byte states): values outside 0..255 wrap, as in PyTorch for integers."""
    return self.to(dtypes.uint8)


for _method, _dtype, _instead in (
        ("char", "int8", "use .int() or .long()"),
        ("short", "int16", "use .int() or .long()"),
        ("bfloat16", "bfloat16", "NumPy has no bfloat16: use .float() (float32), which is what minigrad computes in, "
                                 "or .half() (float16) for half the memory"),
        ("chalf", "complex32", "minigrad has no complex numbers: keep the real and imaginary parts as two tensors"),
        ("cfloat", "complex64", "minigrad has no complex numbers: keep the real and imaginary parts as two tensors"),
        ("cdouble", "complex128", "minigrad has no complex numbers: keep the real and imaginary parts as two tensors")):
    _missing_dtype(_method, _dtype, _instead)
del _method, _dtype, _instead
