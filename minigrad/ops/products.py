"""Products beyond matmul: dot, outer, inner, tensordot, kron, einsum, addmm, and the diagonal.

Most are matmul or a broadcast multiply in another shape, so they are built from those ops
and inherit their derivatives (and PyTorch's node names, where PyTorch builds them the same
way). The ones with nodes of their own:

    diagonal(x)       picks x[..., i, i + offset]; its derivative puts the gradient back on
                      that diagonal of zeros (``DiagEmbed``), and that one's is diagonal again.
    trace(A) = Σ Aᵢᵢ  d/dA = I · grad.
    einsum            a sum of products; the derivative for one operand is the einsum of the
                      output gradient with the other operands, written to that operand's
                      subscripts: for "ij,jk->ik", dA = einsum("ik,jk->ij", dC, B).
                      A repeated subscript ("ii->i") puts the gradient on the diagonal: the
                      target is renamed ("iA") and tied by an identity matrix ("i,iA->iA").
    addmm             β·input + α·(m1 @ m2): d input = β·grad (summed back to its shape),
                      d m1 = α·grad @ m2ᵀ, d m2 = α·m1ᵀ @ grad.
"""
from __future__ import annotations

import string

import numpy as np

from minigrad.autograd.function import Function
from minigrad.functional_ops import write_out
from minigrad.ops.broadcast import flag, integer, number, sum_to, wrap_dim
from minigrad.ops.matmul import Dot, UnsafeView
from minigrad.ops.shape import view_of
from minigrad._tensor import Tensor, check_tensor
from minigrad.ops.registry import tensor_method


def _same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{op}: expected both tensors to have the same dtype, but found {a.dtype} and {b.dtype}: "
                           "convert one with .to(dtype)")


# -- dot, outer, inner, tensordot, kron ----------------------------------------------------------
@tensor_method(top_level=True)
def dot(self, tensor: Tensor) -> Tensor:
    """The sum of the products of two vectors of the same length: a 0-d tensor."""
    check_tensor("dot", "tensor", 1, tensor)
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors")
    if self.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src [{tensor.shape[0]}] "
                           f"to have the same number of elements, but got {self.shape[0]} and {tensor.shape[0]} elements respectively")
    _same_dtype("dot", self, tensor)
    return Dot.apply(self, tensor)


@tensor_method(top_level=True)
def outer(self, vec2: Tensor) -> Tensor:
    """``out[i, j] = self[i] * vec2[j]``: a column times a row, by broadcasting."""
    check_tensor("outer", "vec2", 1, vec2)
    for name, t in (("self", self), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return self.reshape(-1, 1) * vec2


@tensor_method(top_level=True)
def inner(self, other: Tensor) -> Tensor:
    """Products summed over the last dimension of both: ``tensordot(self, other, ([-1], [-1]))``."""
    check_tensor("inner", "other", 1, other)
    if self.ndim == 0 or other.ndim == 0:
        return self * other
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(self.shape)} and {list(other.shape)}")
    return tensordot(self, other, ([-1], [-1]))


def tensordot(a: Tensor, b: Tensor, dims=2, out: Tensor | None = None) -> Tensor:
    """Sum the products over the dims ``dims[0]`` of ``a`` paired with ``dims[1]`` of ``b``
    (an int n: the last n of ``a`` with the first n of ``b``). One matrix product: the
    contracted dims are moved together and flattened, then the result is unflattened."""
    check_tensor("tensordot", "a", 1, a)
    check_tensor("tensordot", "b", 2, b)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (tuple, list)):
        if len(dims) != 2:
            raise RuntimeError(f"tensordot expects dims to be a pair of lists of dims, got {dims}")
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    else:
        n = integer(dims, "dims")
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={n}")
        if n > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={n}")
        dims_a, dims_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    if len(dims_a) != len(dims_b):
        raise RuntimeError(f"both dimension lists should have same length, got {dims_a} and {dims_b}")
    dims_a = [wrap_dim(d, a.ndim) for d in dims_a]
    dims_b = [wrap_dim(d, b.ndim) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} "
                               f"and second has size {b.shape[db]} in dim {db}")
    _same_dtype("tensordot", a, b)
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    k = int(np.prod([a.shape[d] for d in dims_a], dtype=np.int64))
    left = a.permute(*free_a, *dims_a).reshape(-1, k)
    right = b.permute(*dims_b, *free_b).reshape(k, -1)
    result = (left @ right).reshape(*[a.shape[d] for d in free_a], *[b.shape[d] for d in free_b])
    return result if out is None else write_out("tensordot", result, out)


@tensor_method(top_level=True)
def kron(self, other: Tensor) -> Tensor:
    """The Kronecker product: block (i, j) of the result is ``self[i, j] * other``.

    Interleaving the dims, ``self`` as (a0, 1, a1, 1, ...) times ``other`` as (1, b0, 1, b1, ...),
    then merging each pair, is exactly that."""
    check_tensor("kron", "other", 1, other)
    n = max(self.ndim, other.ndim)
    sa = (1,) * (n - self.ndim) + tuple(self.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    product = self.reshape(*[s for d in sa for s in (d, 1)]) * other.reshape(*[s for d in sb for s in (1, d)])
    return UnsafeView.apply(product, tuple(x * y for x, y in zip(sa, sb)))


# -- the diagonal -----------------------------------------------------------------------------------
def _diagonal_array(x: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    d = np.diagonal(x, offset, dim1, dim2)
    if x.flags.writeable:  # a view to write through, as PyTorch's (NumPy hands it out read-only)
        d.flags.writeable = True
    return d


class Diagonal(Function):
    """``x.diagonal(offset, dim1, dim2)``: a view; the diagonal becomes the last dimension."""

    node_name = "DiagonalBackward0"

    @staticmethod
    def forward(ctx, a, offset=0, dim1=0, dim2=1):
        dim1, dim2 = wrap_dim(dim1, a.ndim), wrap_dim(dim2, a.ndim)
        if dim1 == dim2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        ctx.input_shape, ctx.args = a.shape, (offset, dim1, dim2)
        return view_of(a, _diagonal_array(a._data, offset, dim1, dim2), (Diagonal, ctx.args))

    @staticmethod
    def backward(ctx, grad):
        return DiagEmbed.apply(grad, ctx.input_shape, *ctx.args), None, None, None


class DiagonalCopy(Diagonal):
    """``diag`` of a matrix: PyTorch's copy of the diagonal (``diagonal_copy``), not a view."""

    node_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(ctx, a, offset=0, dim1=0, dim2=1):
        ctx.input_shape, ctx.args = a.shape, (offset, dim1, dim2)
        return Tensor._wrap(np.diagonal(a._data, offset, dim1, dim2).copy())


class DiagEmbed(Function):
    """Zeros of ``shape`` with ``values`` on the diagonal (offset, dim1, dim2): diagonal's inverse."""

    node_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, values, shape, offset, dim1, dim2):
        ctx.args = offset, dim1, dim2
        out = np.zeros(shape, dtype=values._data.dtype)
        _diagonal_array(out, offset, dim1, dim2)[...] = values._data
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None, None


@tensor_method(top_level=True, out=False)
def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return Diagonal.apply(self, integer(offset, "offset"), dim1, dim2)


@tensor_method(top_level=True)
def diag(self, diagonal: int = 0) -> Tensor:
    """A vector's square matrix with it on the ``diagonal``-th diagonal; a matrix's diagonal as a vector."""
    k = integer(diagonal, "diagonal")
    if self.ndim == 1:
        n = self.shape[0] + abs(k)
        return DiagEmbed.apply(self, (n, n), k, 0, 1)
    if self.ndim == 2:
        return DiagonalCopy.apply(self, k, 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")


@tensor_method(top_level=True, out=False)
def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Zeros, one dimension more than ``self``, with ``self``'s last dimension on the ``offset``-th
    diagonal of dims (``dim1``, ``dim2``): a batch of vectors becomes a batch of diagonal matrices."""
    offset = integer(offset, "offset")
    d1, d2 = wrap_dim(dim1, self.ndim + 1), wrap_dim(dim2, self.ndim + 1)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = self.shape[-1] + abs(offset)
    shape = list(self.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    return DiagEmbed.apply(self, tuple(shape), offset, d1, d2)


@tensor_method(top_level=True, out=False)
def diagflat(self, offset: int = 0) -> Tensor:
    """The elements of ``self``, flattened, on the ``offset``-th diagonal of a square matrix."""
    return diag_embed(self.reshape(-1), integer(offset, "offset"), 0, 1)


@tensor_method()
def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
    """Write ``fill_value`` on the main diagonal (``self[i, i, ..., i]``), through a view, so the
    gradient there is 0 (PyTorch's CopySlices). ``wrap``: a tall matrix's diagonal starts again
    every ``columns + 1`` rows, as NumPy's ``fill_diagonal``."""
    fill_value, wrap = number(fill_value, "fill_value"), flag(wrap, "wrap")
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) > 1:
        raise RuntimeError(f"all dimensions of input must be of equal length, got {list(self.shape)}")
    rows, columns = self.shape[0], self.shape[1]
    if wrap and self.ndim == 2 and rows > columns and self.is_contiguous():
        self.view(-1)[::columns + 1].fill_(fill_value)  # (one write: the flat positions k·(columns + 1))
        return self
    starts = range(0, rows, columns + 1) if wrap and self.ndim == 2 else (0,)
    for start in starts:
        target = self[start:] if start else self
        for _ in range(self.ndim - 1):
            target = target.diagonal(0, 0, -1)
        target.fill_(fill_value)
    return self


class Trace(Function):
    node_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, a):
        if a.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
        ctx.input_shape = a.shape
        x = a._data
        if x.dtype == np.bool_:
            raise NotImplementedError("\"trace\" not implemented for 'Bool': convert with .int() first")
        return Tensor._wrap(np.asarray(np.trace(x), dtype=np.int64 if x.dtype.kind in "biu" else x.dtype))

    @staticmethod
    def backward(ctx, grad):
        n = min(ctx.input_shape)
        return DiagEmbed.apply(grad.expand(n), ctx.input_shape, 0, 0, 1)


@tensor_method(top_level=True, out=False)
def trace(self) -> Tensor:
    return Trace.apply(self)


# -- einsum -------------------------------------------------------------------------------------------
def _spell_out_ellipsis(subscripts: list, output: str | None, operands) -> tuple:
    """'...' replaced by letters the equation does not use, one per broadcast dim, aligned from
    the right as PyTorch aligns them; the implicit output puts them first."""
    free = iter(c for c in string.ascii_letters if c not in "".join(subscripts) + (output or ""))
    counts = []
    for i, (s, t) in enumerate(zip(subscripts, operands)):
        if s.count("...") > 1 or "." in s.replace("...", ""):
            raise RuntimeError(f"einsum(): found more than one '...' or a stray '.' in the subscripts of operand {i}")
        counts.append(t.ndim - len(s.replace("...", "")) if "..." in s else 0)
        if counts[-1] < 0:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s) - 3}) is more than the "
                               f"number of dimensions ({t.ndim}) for operand {i}")
    letters = "".join(next(free) for _ in range(max(counts + [0])))
    spelled = [s.replace("...", letters[len(letters) - n:]) for s, n in zip(subscripts, counts)]
    if output is None:
        return spelled, None, letters
    if "." in output.replace("...", "") or output.count("...") > 1:
        raise RuntimeError("einsum(): found more than one '...' or a stray '.' in the output subscripts")
    return spelled, output.replace("...", letters), letters


def _parse(equation: str, operands) -> tuple:
    """The subscripts of each operand and of the output ("ij,jk->ik"; without "->", the output is
    the letters that appear once, in alphabetical order, after the '...' dims, as in NumPy and PyTorch)."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    subscripts = inputs.split(",")
    if len(subscripts) != len(operands):
        raise RuntimeError(f"einsum(): {len(subscripts)} operands were specified in the equation but "
                           f"{len(operands)} were given")
    subscripts, output, broadcast = _spell_out_ellipsis(subscripts, output if arrow else None, operands)
    letters = "".join(subscripts)
    for c in letters + (output or ""):
        if c not in string.ascii_letters:
            raise RuntimeError(f"einsum(): invalid subscript given at index {equation.index(c)} in the equation "
                               f"string, subscripts must be in [a-zA-Z]")
    if output is None:
        output = broadcast + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in broadcast))
    for c in output:
        if c not in letters:
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")
        if output.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    sizes: dict = {}  # each subscript's size; a size 1 broadcasts against a larger one, as in PyTorch
    for i, (s, t) in enumerate(zip(subscripts, operands)):
        if len(s) != t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s)}) does not match the "
                               f"number of dimensions ({t.ndim}) for operand {i} and no ellipsis was given")
        own: dict = {}
        for d, (c, n) in enumerate(zip(s, t.shape)):
            if own.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't match, "
                                   f"{n} != {own[c]}")
            seen = sizes.setdefault(c, n)
            if seen != n and 1 not in (seen, n):
                if c in broadcast:
                    raise RuntimeError(f"einsum(): dimension {d} covered by ellipsis in operand {i} has size {n} which "
                                       f"does not broadcast with previously seen ellipsis with size {seen} for the "
                                       "respective dimension")
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {seen}")
            sizes[c] = max(seen, n)
    return subscripts, output, sizes


class Einsum(Function):
    """One node for the whole sum of products. PyTorch has no einsum node (it runs a chain of
    permutes, multiplies and bmm, and its result's node is the last of them), so this is named
    after the function."""

    node_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, subscripts, output, sizes, *operands):
        ctx.subscripts, ctx.output, ctx.sizes = subscripts, output, sizes
        ctx.save_for_backward(*operands)
        spec = ",".join(subscripts) + "->" + output
        return Tensor._wrap(np.asarray(np.einsum(spec, *(t._data for t in operands), optimize=len(operands) > 2)))

    @staticmethod
    def backward(ctx, grad):
        operands = ctx.saved_tensors
        used = "".join(ctx.subscripts) + ctx.output
        grads = []
        for i, (s, needs) in enumerate(zip(ctx.subscripts, ctx.needs_input_grad[3:])):
            if not needs:
                grads.append(None)
                continue
            specs = [ctx.output] + [ctx.subscripts[j] for j in range(len(operands)) if j != i]
            inputs = [grad] + [operands[j] for j in range(len(operands)) if j != i]
            # A letter repeated in operand i ("ii": its diagonal) is renamed in the target and tied
            # to the original by an identity matrix: the gradient lands on the diagonal, zeros elsewhere.
            sizes, target, fresh = dict(ctx.sizes), "", iter(c for c in string.ascii_letters if c not in used)
            for c in s:
                if c in target:
                    renamed = next(fresh)
                    sizes[renamed] = sizes[c]
                    specs.append(c + renamed)
                    inputs.append(Tensor._wrap(np.eye(sizes[c], dtype=grad._data.dtype)))
                    c = renamed
                target += c
            kept = "".join(c for c in target if c in "".join(specs))  # a letter only operand i has was summed
            g = Einsum.apply(specs, kept, sizes, *inputs)
            if kept != target:  # ... so its gradient is the same all along it
                g = g.reshape(*[sizes[c] if c in kept else 1 for c in target]).expand(*[sizes[c] for c in target])
            grads.append(g)
        return (None, None, None, *grads)


def einsum(equation: str, *operands) -> Tensor:
    """``einsum("ij,jk->ik", a, b)``: the products of the operands' elements whose subscripts agree,
    summed over the subscripts missing from the output (here ``a @ b``)."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for i, t in enumerate(operands):
        check_tensor("einsum", "operands", i + 1, t)
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for t in operands[1:]:
        _same_dtype("einsum", operands[0], t)
    subscripts, output, sizes = _parse(equation, operands)
    # An operand's size-1 dim that broadcasts is expanded first: ExpandBackward0 sums its gradient back.
    operands = [t if all(n == sizes[c] for c, n in zip(s, t.shape)) else t.expand(*[sizes[c] for c in s])
                for s, t in zip(subscripts, operands)]
    return Einsum.apply(subscripts, output, sizes, *operands)


# -- addmm ----------------------------------------------------------------------------------------------
class Addmm(Function):
    node_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, a, mat1, mat2, beta=1, alpha=1):
        ctx.input_shape, ctx.beta, ctx.alpha = a.shape, beta, alpha
        need_a, need_1, need_2 = ctx.needs_input_grad[:3]
        ctx.save_for_backward(mat1 if need_2 else None, mat2 if need_1 else None)
        product = mat1._data @ mat2._data
        out = product if alpha == 1 else alpha * product
        if beta != 0:  # beta = 0: input is ignored, its NaN and inf too, as in PyTorch
            out = out + (a._data if beta == 1 else beta * a._data)
        else:
            out = np.broadcast_to(out, np.broadcast_shapes(out.shape, a.shape))
        return Tensor._wrap(np.array(out, dtype=mat1._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        mat1, mat2 = ctx.saved_tensors
        need_a, need_1, need_2 = ctx.needs_input_grad[:3]
        grad_a = sum_to(grad * ctx.beta, ctx.input_shape) if need_a else None
        grad_1 = (grad @ mat2.t()) * ctx.alpha if need_1 else None
        grad_2 = (mat1.t() @ grad) * ctx.alpha if need_2 else None
        return grad_a, grad_1, grad_2, None, None


@tensor_method(top_level=True)
def addmm(self, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * (mat1 @ mat2)``, ``self`` broadcast to the product's shape."""
    return Addmm.apply(self, *_addmm_arguments(self, mat1, mat2, beta, alpha))


@tensor_method()
def addmm_(self, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self._inplace(Addmm, *_addmm_arguments(self, mat1, mat2, beta, alpha))


def _addmm_arguments(self: Tensor, mat1, mat2, beta, alpha) -> tuple:
    check_tensor("addmm", "mat1", 1, mat1)
    check_tensor("addmm", "mat2", 2, mat2)
    beta, alpha = number(beta, "beta"), number(alpha, "alpha")
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor" if mat1.ndim != 2
                           else f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    for t in (mat1, mat2):
        _same_dtype("addmm", self, t)
    shape = (mat1.shape[0], mat2.shape[1])
    if self._data.dtype == np.bool_ and 0 not in shape:  # (PyTorch returns an empty product unchecked)
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool': convert the tensors with .int() first")
    try:
        if np.broadcast_shapes(self.shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({shape[1]}) must match the existing size "
                           f"({self.shape[-1]}) at non-singleton dimension 1.  Target sizes: {list(shape)}.  "
                           f"Tensor sizes: {list(self.shape)}") from None
    if self._data.dtype.kind in "iu":  # PyTorch converts them to the tensor's type: 1.5 is 1
        beta, alpha = int(beta), int(alpha)
    return mat1, mat2, beta, alpha
