"""A hypothesis strategy for random programs over the API minigrad shares with torch.

A program is a list of steps (plain tuples, so a failing one prints as valid
Python); ``interpreter.py`` says what each step does. The generator keeps a
model of every slot (shape, requires_grad, leaf or view of a leaf) so that
shapes agree by construction and most programs run to the end; the few steps it
allows that must raise (an in-place op on a leaf, a second backward without
retain_graph, ...) are there to compare the exception types.

Which ops appear is read from minigrad itself (``hasattr``), so the generator
grows as ops land.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
from hypothesis import strategies as st

import minigrad
from tests.differential.interpreter import (
    BINARY, FUNCTION_ARITY, FUNCTIONAL, INPLACE, INPLACE_NO_OPERAND, LOSSES, UNARY, UNARY_NEEDS, mask,
)
from tests.differential.known import OPEN_DIFFERENCES


def _has(*methods: str) -> bool:
    return all(hasattr(minigrad.Tensor, m) for m in methods)


UNARY_OPS = sorted(op for op in UNARY if _has(*UNARY_NEEDS.get(op, ()))) + sorted(FUNCTIONAL)
BINARY_OPS = sorted(set(BINARY) - {"mm", "mv", "bmm"})  # (matmul becomes one of these when the shapes fit)
REDUCTIONS = ["sum", "mean", "max", "min", "softmax", "log_softmax"] + [
    op for op in ("cumsum", "logsumexp", "prod", "std", "var", "norm") if _has(op)
] + (["std0", "var0", "norm1"] if _has("std", "var", "norm") else []) + (
    ["sort", "sort_descending"] if _has("sort") else []) + [op for op in ("var_mean", "std_mean") if hasattr(minigrad, op)]
MODES = ["no_grad", "enable_grad", "inference_mode", "set_grad_enabled"]
SHAPE_OPS = [op for op in ("flip", "roll", "tril", "triu", "masked_fill", "repeat", "t", "index_select", "gather")
             if _has(op)]
MULTI_OPS = [op for op in ("chunk", "split", "unbind") if _has(op)]
JOINS = [op for op in ("cat", "stack") if hasattr(minigrad, op)]
VIEWS = ["reshape", "view", "transpose", "permute", "unsqueeze", "squeeze", "expand", "T", "flatten"]
NODE_HOOKS = hasattr(minigrad.autograd.graph.Node, "register_prehook") and hasattr(
    minigrad.autograd.graph.Node, "register_hook"
)
SCALARS = [2.0, -1.5, 0.5, 3.0]


@dataclass(frozen=True)
class Slot:
    """What the generator knows about one value of the program."""

    shape: tuple
    requires_grad: bool
    leaf: bool
    of_grad_leaf: bool = False  # a view of a leaf that requires grad (in-place on it must raise)
    is_float: bool = True
    storage: int | None = None  # the slot whose memory this one shares (itself, if it owns its memory)
    expanded: bool = False  # an expand() view, or a view of one
    inference: bool = False  # made in inference_mode (mode_call)


def _broadcastable_to(shape: tuple, target: tuple) -> bool:
    if len(shape) > len(target):
        return False
    return all(s == 1 or s == t for s, t in zip(reversed(shape), reversed(target)))


def _broadcasts(a: tuple, b: tuple) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


@functools.lru_cache(maxsize=None)
def _ints(lo: int, hi: int) -> st.SearchStrategy:
    """Strategies are built once per range: building one per draw dominated generation time."""
    return st.integers(lo, hi)


def _choice(draw, options):
    """One of ``options``, shrinking towards the first."""
    options = tuple(options)
    return options[draw(_ints(0, len(options) - 1))]


def _distinct(draw, options, min_size: int, max_size: int) -> list:
    """Between ``min_size`` and ``max_size`` distinct elements of ``options``, in drawn order."""
    left = list(options)
    n = draw(_ints(min(min_size, len(left)), min(max_size, len(left))))
    return [left.pop(draw(_ints(0, len(left) - 1))) for _ in range(n)]


def _bool(draw) -> bool:
    return bool(draw(_ints(0, 1)))


# -- pieces --------------------------------------------------------------------------------------------
SIDES = (1, 2, 3, 2, 3, 0)


@st.composite
def basic_key(draw, shape: tuple, unique_lists: bool = False) -> tuple:
    """An index of ints, slices and None, maybe ending in an Ellipsis; sometimes one list or 0-d tensor.

    Negative slice steps are drawn too: torch refuses them (ValueError), so must minigrad.
    """
    parts: list = []
    dims = list(shape)
    advanced = False
    d = 0
    for _ in range(draw(_ints(1, len(dims) + 1))):
        choice = _choice(draw, ["int", "slice", "slice", "slice", "none", "ellipsis", "list", "t0"])
        if choice == "none":
            parts.append(None)
        elif choice == "ellipsis":
            parts.append(Ellipsis)
            break
        elif d >= len(dims):
            continue
        elif dims[d] > 0 and choice in ("int", "t0"):
            i = draw(_ints(-dims[d], dims[d] - 1))
            parts.append(("t0", i) if choice == "t0" and i >= 0 else i)
            d += 1
        elif dims[d] > 0 and choice == "list" and not advanced:
            if unique_lists:  # a repeated index in a write makes which value lands unspecified
                chosen = _distinct(draw, range(dims[d]), 1, 3)
            else:
                chosen = [draw(_ints(-dims[d], dims[d] - 1)) for _ in range(draw(_ints(1, 3)))]
            parts.append(("list", tuple(chosen)))
            advanced = True
            d += 1
        else:
            start = _choice(draw, [None, 0, 1, -1])
            stop = _choice(draw, [None, 2, -1, 3])
            step = _choice(draw, [None, None, None, 1, 2, 2, -1])
            parts.append(slice(start, stop, step))
            d += 1
    return tuple(parts)


def key_shape(shape: tuple, key: tuple) -> tuple | None:
    """The shape of ``x[key]`` (NumPy's rules, the same as torch's here), or None if invalid."""
    np_key = []
    for part in key:
        if isinstance(part, tuple) and part[0] == "list":
            np_key.append(list(part[1]))
        elif isinstance(part, tuple) and part[0] == "t0":
            np_key.append(part[1])
        elif isinstance(part, tuple) and part[0] == "mask":
            np_key.append(mask(shape, part[1]))  # the number of elements picked depends on the mask
        elif isinstance(part, slice) and part.step is not None and part.step < 0:
            np_key.append(slice(part.start, part.stop, -part.step))  # torch refuses; shape is irrelevant
        else:
            np_key.append(part)
    try:
        return np.empty(shape)[tuple(np_key)].shape
    except (IndexError, ValueError, TypeError):
        return None


# -- the program strategy ------------------------------------------------------------------------------
class _Builder:
    def __init__(self, draw):
        self.draw = draw
        self.slots: list[Slot | None] = []
        self.steps: list[tuple] = []

    def pick(self, predicate=lambda s: True) -> int | None:
        candidates = [i for i, s in enumerate(self.slots) if s is not None and predicate(s)]
        return None if not candidates else _choice(self.draw, candidates)

    def add(self, step: tuple, *new: Slot | None) -> None:
        self.steps.append(step)
        for slot in new:
            if slot is not None and slot.storage is None:
                slot = replace(slot, storage=len(self.slots))
            self.slots.append(slot)

    # each method appends one step, or does nothing when the state offers no valid one
    def leaf(self) -> None:
        shape = tuple(_choice(self.draw, SIDES) for _ in range(self.draw(_ints(0, 3))))
        rg = _bool(self.draw)
        seed = self.draw(_ints(0, 2**16))
        kind = _choice(self.draw, ["normal", "normal", "int", "normal", "float32"])
        self.add(("leaf", shape, rg, seed, kind), Slot(shape, rg, leaf=True))

    def unary(self) -> None:
        i = self.pick(lambda s: s.is_float)
        if i is None:
            return
        op = _choice(self.draw, UNARY_OPS)
        s = self.slots[i]
        self.add(("unary", op, i), Slot(s.shape, s.requires_grad, leaf=not s.requires_grad))

    def binary(self) -> None:
        a = self.pick(lambda s: s.is_float)
        if a is None:
            return
        op = _choice(self.draw, BINARY_OPS)
        sa = self.slots[a]
        if op == "matmul":
            b = self.pick(lambda s: s.is_float and _matmul_shape(sa.shape, s.shape) is not None)
            if b is not None:
                sb = self.slots[b]
                rg = sa.requires_grad or sb.requires_grad
                op = _choice(self.draw, ["matmul", _matmul_method(sa.shape, sb.shape)])
                self.add(("binary", op, a, b), Slot(_matmul_shape(sa.shape, sb.shape), rg, leaf=not rg))
                return
            op = "mul"
        b = self.pick(lambda s: s.is_float and _broadcasts(s.shape, sa.shape))
        if b is None or self.draw(_ints(0, 3)) == 0:
            op = "add" if op == "maximum" else op  # torch's maximum takes tensors only
            scalar = _choice(self.draw, SCALARS)
            reverse = _bool(self.draw)
            self.add(("binary_scalar", op, a, scalar, reverse), Slot(sa.shape, sa.requires_grad, leaf=not sa.requires_grad))
            return
        sb = self.slots[b]
        rg = sa.requires_grad or sb.requires_grad
        self.add(("binary", op, a, b), Slot(np.broadcast_shapes(sa.shape, sb.shape), rg, leaf=not rg))

    def loss(self) -> None:
        a = self.pick(lambda s: s.is_float)
        if a is None:
            return
        sa = self.slots[a]
        b = self.pick(lambda s: s.is_float and s.shape == sa.shape)
        op = _choice(self.draw, sorted(LOSSES))
        reduction = _choice(self.draw, ["mean", "sum", "none"])
        rg = sa.requires_grad or self.slots[b].requires_grad
        self.add(("loss", op, a, b, reduction), Slot(sa.shape if reduction == "none" else (), rg, leaf=not rg))

    def reduce(self) -> None:
        i = self.pick(lambda s: s.is_float)
        if i is None:
            return
        s = self.slots[i]
        op = _choice(self.draw, REDUCTIONS)
        nd = len(s.shape)
        needs_dim = op in ("softmax", "log_softmax", "cumsum", "logsumexp", "sort", "sort_descending")
        if needs_dim or _bool(self.draw):
            dim = self.draw(_ints(-max(nd, 1), max(nd, 1) - 1))
        else:
            dim = None
        keepdim = dim is not None and _bool(self.draw)
        out = Slot(_reduced_shape(s.shape, op, dim, keepdim), s.requires_grad, leaf=not s.requires_grad)
        if (op in ("max", "min") and dim is not None) or op.startswith("sort"):
            indices = replace(out, requires_grad=False, leaf=True, is_float=False)
            self.add(("reduce", op, i, dim, keepdim), out, indices)
        elif op in ("var_mean", "std_mean"):
            self.add(("reduce", op, i, dim, keepdim), out, out)
        else:
            self.add(("reduce", op, i, dim, keepdim), out)

    def shape_op(self) -> None:
        i = self.pick(lambda s: s.is_float)
        if i is None or not SHAPE_OPS:
            return
        s = self.slots[i]
        shape, nd = s.shape, len(s.shape)
        op = _choice(self.draw, SHAPE_OPS)
        new = shape
        if op == "masked_fill":
            args = (self.draw(_ints(0, 2**16)), _choice(self.draw, SCALARS))
        elif op in ("tril", "triu"):
            if nd < 2:
                return
            args = (self.draw(_ints(-1, 1)),)
        elif op == "t":
            if nd > 2:
                return
            args, new = (), tuple(reversed(shape))
        elif op == "repeat":
            sizes = tuple(self.draw(_ints(1, 2)) for _ in range(nd + self.draw(_ints(0, 1))))
            args = (sizes,)
            padded = (1,) * (len(sizes) - nd) + shape
            new = tuple(n * r for n, r in zip(padded, sizes))
        elif nd == 0:
            return
        elif op == "flip":
            args = (tuple(_distinct(self.draw, range(nd), 1, nd)),)
        elif op == "roll":
            args = (self.draw(_ints(-2, 2)), self.draw(_ints(-nd, nd - 1)))
        elif op == "index_select":
            dim = self.draw(_ints(-nd, nd - 1))
            if shape[dim] == 0:
                return
            index = tuple(self.draw(_ints(0, shape[dim] - 1)) for _ in range(self.draw(_ints(1, 3))))
            args = (dim, index)
            new = tuple(len(index) if k == dim % nd else n for k, n in enumerate(shape))
        else:  # gather
            dim = self.draw(_ints(-nd, nd - 1))
            if shape[dim] == 0:
                return
            index_shape = tuple(self.draw(_ints(1, 3)) if k == dim % nd else self.draw(_ints(min(n, 1), n))
                                for k, n in enumerate(shape))
            args, new = (dim, self.draw(_ints(0, 2**16)), index_shape), index_shape
        self.add(("shape_op", op, i, args), Slot(tuple(new), s.requires_grad, leaf=not s.requires_grad))

    def multi(self) -> None:
        i = self.pick(lambda s: s.is_float and len(s.shape) > 0)
        if i is None or not MULTI_OPS:
            return
        s = self.slots[i]
        nd = len(s.shape)
        op = _choice(self.draw, MULTI_OPS)
        dim = self.draw(_ints(-nd, nd - 1))
        args = (self.draw(_ints(1, 3)), dim) if op != "unbind" else (dim,)
        shapes = [tuple(o.shape) for o in getattr(_torch_empty(s.shape), op)(*args)]
        if not shapes:
            return
        views = [Slot(shape, s.requires_grad, leaf=not s.requires_grad,
                      of_grad_leaf=s.of_grad_leaf or (s.leaf and s.requires_grad), storage=s.storage)
                 for shape in shapes]
        self.add(("multi", op, i, args, len(views)), *views)

    def join(self) -> None:
        a = self.pick(lambda s: s.is_float)
        if a is None or not JOINS:
            return
        sa = self.slots[a]
        b = self.pick(lambda s: s.is_float and s.shape == sa.shape)
        op = _choice(self.draw, JOINS)
        nd = len(sa.shape)
        if op == "cat":
            if nd == 0:
                return
            dim = self.draw(_ints(-nd, nd - 1))
            new = tuple(2 * n if k == dim % nd else n for k, n in enumerate(sa.shape))
        else:
            dim = self.draw(_ints(-nd - 1, nd))
            new = np.stack([np.empty(sa.shape)] * 2, axis=dim).shape
        rg = sa.requires_grad or self.slots[b].requires_grad
        self.add(("join", op, (a, b), dim), Slot(tuple(new), rg, leaf=not rg))

    def where(self) -> None:
        a = self.pick(lambda s: s.is_float)
        if a is None:
            return
        sa = self.slots[a]
        b = self.pick(lambda s: s.is_float and _broadcasts(s.shape, sa.shape))
        rg = sa.requires_grad or self.slots[b].requires_grad
        shape = np.broadcast_shapes(sa.shape, self.slots[b].shape)
        self.add(("where", self.draw(_ints(0, 2**16)), a, b), Slot(shape, rg, leaf=not rg))

    def view(self) -> None:
        i = self.pick()
        if i is None:
            return
        s = self.slots[i]
        op = _choice(self.draw, VIEWS)
        shape, nd = s.shape, len(s.shape)
        if op in ("reshape", "view"):
            numel = int(np.prod(shape))
            target = _choice(self.draw, _factorizations(numel))
            if numel and _bool(self.draw) and target:
                target = tuple(-1 if k == 0 else d for k, d in enumerate(target))
            args, new = (target,), np.empty(shape).reshape(target).shape
        elif op == "transpose":
            d0, d1 = (self.draw(_ints(-max(nd, 1), max(nd, 1) - 1)) for _ in range(2))
            args = (d0, d1)
            new = np.swapaxes(np.empty(shape), d0, d1).shape if nd else ()
        elif op == "permute":
            perm = tuple(_distinct(self.draw, range(nd), nd, nd))
            args, new = (perm,), tuple(shape[p] for p in perm)
        elif op == "unsqueeze":
            d = self.draw(_ints(-nd - 1, nd))
            args, new = (d,), np.expand_dims(np.empty(shape), d).shape
        elif op == "squeeze":
            if nd and _bool(self.draw):
                d = self.draw(_ints(-nd, nd - 1))
                args = (d,)
                new = tuple(n for k, n in enumerate(shape) if not (k == d % nd and n == 1))
            else:
                args, new = (), tuple(n for n in shape if n != 1)
        elif op == "expand":
            extra = ((), (1,), (2,))[self.draw(_ints(0, 2))]
            sizes = extra + tuple(_choice(self.draw, [n, -1]) if n != 1 else _choice(self.draw, [1, 2, 3])
                                  for n in shape)
            args = (sizes,)
            new = extra + tuple(n if z == -1 else z for n, z in zip(shape, sizes[len(extra):]))
        elif op == "T":
            if nd > 2:
                return  # torch deprecates .T beyond 2-D
            args, new = (), tuple(reversed(shape))
        else:  # flatten
            args, new = (), (int(np.prod(shape)),) if nd else (1,)
        view = Slot(tuple(new), s.requires_grad, leaf=not s.requires_grad,
                    of_grad_leaf=s.of_grad_leaf or (s.leaf and s.requires_grad), is_float=s.is_float,
                    storage=s.storage, expanded=s.expanded or op == "expand")
        self.add(("view", op, i, args), view)

    def index(self) -> None:
        i = self.pick()
        if i is None:
            return
        s = self.slots[i]
        if s.shape and self.draw(_ints(0, 5)) == 0:
            key = (("mask", self.draw(_ints(0, 2**16))),)
        else:
            key = self.draw(basic_key(s.shape))
        new = key_shape(s.shape, key)
        if new is None:
            new = s.shape  # invalid: both libraries must raise the same error
        basic = not any(isinstance(p, tuple) and p[0] in ("list", "mask") for p in key)
        self.add(("index", i, key), Slot(tuple(new), s.requires_grad, leaf=not s.requires_grad,
                                         of_grad_leaf=basic and (s.of_grad_leaf or (s.leaf and s.requires_grad)),
                                         is_float=s.is_float, storage=s.storage if basic else None,
                                         expanded=basic and s.expanded))

    def _value_for(self, shape: tuple):
        """An operand for writing into ``shape``: a slot that broadcasts to it, or a scalar."""
        j = self.pick(lambda s: s.is_float and _broadcastable_to(s.shape, shape))
        if j is None or self.draw(_ints(0, 2)) == 0:
            return None, _choice(self.draw, SCALARS)
        return j, None

    def _no_grad_for(self, s: Slot) -> bool:
        """In-place on a leaf that requires grad (or a view of one) is legal only under no_grad; mostly obey."""
        if (s.leaf and s.requires_grad) or s.of_grad_leaf:
            return self.draw(_ints(0, 7)) != 0
        return self.draw(_ints(0, 7)) == 0

    def inplace(self) -> None:
        i = self.pick(lambda s: s.is_float)
        if i is None:
            return
        s = self.slots[i]
        op = _choice(self.draw, sorted(INPLACE))
        if op in INPLACE_NO_OPERAND:
            operand, scalar = None, None
        elif op == "fill_":
            operand, scalar = None, _choice(self.draw, SCALARS)
        else:
            operand, scalar = self._value_for(s.shape)
            if op == "copy_" and operand is None:
                return
        no_grad = self._no_grad_for(s)
        rg = s.requires_grad or (not no_grad and operand is not None and self.slots[operand].requires_grad)
        self.steps.append(("inplace", op, i, operand, scalar, no_grad))
        self.slots[i] = replace(s, requires_grad=rg, leaf=s.leaf and not (rg and not no_grad))

    def setitem(self) -> None:
        i = self.pick(lambda s: s.is_float and s.shape != ())
        if i is None:
            return
        s = self.slots[i]
        key = self.draw(basic_key(s.shape, unique_lists=True))
        target = key_shape(s.shape, key)
        if target is None:
            return
        operand, scalar = self._value_for(target)
        advanced = any(isinstance(p, tuple) for p in key)
        if advanced and operand == i and (0 in s.shape or 0 in target):
            # An empty write of a tensor into itself: torch refuses x[:, [0]] = x for x of shape (0, 1) but
            # allows x[[0]] = x for (1, 1, 0) and x[1:, [0]] = x for (1, 1): unspecified, left out
            operand, scalar = None, SCALARS[0]
        no_grad = self._no_grad_for(s)
        rg = s.requires_grad or (not no_grad and operand is not None and self.slots[operand].requires_grad)
        if (advanced and s.expanded and rg and not no_grad
                and "recorded index_put into an expanded tensor" in OPEN_DIFFERENCES):
            return
        self.steps.append(("setitem", i, key, operand, scalar, no_grad))
        self.slots[i] = replace(s, requires_grad=rg, leaf=s.leaf and not (rg and not no_grad))

    def hook(self) -> None:
        i = self.pick(lambda s: s.requires_grad)
        if i is None:
            return
        scale = _choice(self.draw, [None, 2.0, -1.0])
        self.steps.append(("hook", i, scale))

    def node_hook(self) -> None:
        i = self.pick(lambda s: s.requires_grad and not s.leaf)
        if i is None:
            return
        which = _choice(self.draw, ["pre", "post"])
        self.steps.append(("node_hook", i, which, _choice(self.draw, [None, 2.0])))

    def retain_grad(self) -> None:
        i = self.pick(lambda s: s.requires_grad)
        if i is not None:
            self.steps.append(("retain_grad", i))

    def _grad_inputs(self, min_size: int) -> list[int]:
        candidates = [k for k, s in enumerate(self.slots) if s is not None and s.requires_grad]
        return _distinct(self.draw, candidates, min_size, 3)

    def backward(self) -> None:
        i = self.pick(lambda s: s.requires_grad)
        if i is None:
            return
        seed = self.draw(_ints(0, 2**16))
        create_graph = self.draw(_ints(0, 3)) == 0
        retain_graph = _choice(self.draw, [None, True, True, False])
        inputs = self._grad_inputs(0) if self.draw(_ints(0, 3)) == 0 else None
        self.steps.append(("backward", i, seed, retain_graph, create_graph, inputs))

    def grad(self) -> None:
        i = self.pick(lambda s: s.requires_grad)
        if i is None:
            return
        inputs = self._grad_inputs(1)
        seed = self.draw(_ints(0, 2**16))
        create_graph = _bool(self.draw)
        retain_graph = _choice(self.draw, [None, True, True, False])
        allow_unused = self.draw(_ints(0, 3)) != 0
        step = ("grad", i, inputs, seed, retain_graph, create_graph, allow_unused)
        self.add(step, *(Slot(self.slots[j].shape, create_graph, leaf=not create_graph) for j in inputs))

    def func(self) -> None:
        name = _choice(self.draw, sorted(FUNCTION_ARITY))
        if name == "DirtyMul" and self.draw(_ints(0, 7)):  # mostly on tensors where mark_dirty is legal
            i = self.pick(lambda s: s.is_float and not s.of_grad_leaf and not (s.leaf and s.requires_grad))
        else:
            i = self.pick(lambda s: s.is_float)
        if i is None:
            return
        s = self.slots[i]
        args = [i]
        if FUNCTION_ARITY[name] == 2:
            j = self.pick(lambda t: t.is_float and t.shape == s.shape)
            args.append(j)
        extra: tuple = ()
        if name == "MulConst":
            extra = (_choice(self.draw, SCALARS),)
        elif name in ("ExpNonDiff", "TwoOut"):
            extra = (_bool(self.draw),)
        rg = any(self.slots[a].requires_grad for a in args)
        out = Slot(s.shape, rg, leaf=not rg)
        step = ("func", name, tuple(args), extra)
        if name == "ExpNonDiff":
            self.add(step, out, Slot(s.shape, False, leaf=True))
        elif name == "TwoOut":
            self.add(step, out, out)
        elif name == "DirtyMul":  # the output is the input itself, modified
            self.slots[i] = replace(s, requires_grad=rg, leaf=s.leaf and not rg)
            self.add(step, self.slots[i])
        else:
            self.add(step, out)

    def legacy_leaf(self) -> None:
        """A leaf made with a legacy name: ``autograd.Variable(t, requires_grad=...)`` or a typed constructor
        (``DoubleTensor(list)``, then ``requires_grad_``)."""
        # (no empty sides: DoubleTensor(values.tolist()) of an empty (0, 1) array is a 1-D empty tensor)
        shape = tuple(_choice(self.draw, (1, 2, 3)) for _ in range(self.draw(_ints(1, 3))))
        kind = _choice(self.draw, ["normal", "int", "float32"])
        rg = _bool(self.draw) and kind != "int"
        how = _choice(self.draw, ["Variable", "typed"])
        self.add(("legacy_leaf", shape, rg, self.draw(_ints(0, 2**16)), kind, how),
                 Slot(shape, rg, leaf=True, is_float=kind != "int"))

    def mode_call(self) -> None:
        """A unary op inside a function or a generator decorated with a grad mode."""
        i = self.pick(lambda s: s.is_float)
        if i is None:
            return
        s = self.slots[i]
        mode = _choice(self.draw, MODES)
        rg = s.requires_grad and mode == "enable_grad"
        step = ("mode_call", mode, _bool(self.draw), _choice(self.draw, [op for op in UNARY_OPS if op in UNARY]), i)
        self.add(step, Slot(s.shape, rg, leaf=not rg, inference=mode == "inference_mode"))

    def post_acc_hook(self) -> None:
        i = self.pick(lambda s: s.requires_grad and s.leaf)
        if i is not None:
            self.steps.append(("post_acc_hook", i, _choice(self.draw, [None, None, 2.0])))

    def set_data(self) -> None:
        """``t.data = other``: any shape and dtype (PyTorch refuses an integer one for a tensor that
        requires grad)."""
        i, j = self.pick(), self.pick()
        if i is None or j is None or i == j:
            return
        target, src = self.slots[i], self.slots[j]
        if (target.inference or src.inference) and "set_data with an inference tensor" in OPEN_DIFFERENCES:
            return
        if target.requires_grad and target.shape != src.shape:
            # (torch's gradient of such a tensor keeps the shape its graph recorded: unspecified, left out)
            return
        self.steps.append(("set_data", i, j))
        self.slots[i] = replace(target, shape=src.shape, is_float=src.is_float, storage=src.storage)

    def detach(self) -> None:
        i = self.pick()
        if i is not None:
            s = self.slots[i]
            if s.inference and "detach of an inference tensor changed in place" in OPEN_DIFFERENCES:
                return
            self.add(("detach", i), Slot(s.shape, False, leaf=True, is_float=s.is_float, storage=s.storage))

    def clone(self) -> None:
        i = self.pick()
        if i is not None:
            s = self.slots[i]
            self.add(("clone", i), Slot(s.shape, s.requires_grad, leaf=not s.requires_grad, is_float=s.is_float))

    def take_grad(self) -> None:
        i = self.pick(lambda s: s.requires_grad and s.leaf)
        if i is not None:
            # Unknown until run time whether it is None; model it as a plain float tensor.
            self.add(("take_grad", i), Slot(self.slots[i].shape, False, leaf=True))

    def zero_grad(self) -> None:
        i = self.pick(lambda s: s.requires_grad and s.leaf)
        if i is not None:
            self.steps.append(("zero_grad", i))


def _matmul_shape(a: tuple, b: tuple) -> tuple | None:
    if not a or not b:
        return None  # torch's matmul needs at least 1-D operands
    try:
        return np.matmul(np.zeros(a), np.zeros(b)).shape
    except ValueError:
        return None


def _matmul_method(a: tuple, b: tuple) -> str:
    """The method that does this product of shapes ``matmul`` takes: mm, mv, bmm (or matmul itself)."""
    if len(a) == 2 and len(b) == 2:
        return "mm"
    if len(a) == 2 and len(b) == 1:
        return "mv"
    if len(a) == 3 and len(b) == 3 and a[0] == b[0]:
        return "bmm"
    return "matmul"


def _torch_empty(shape: tuple):
    """For ops whose output shapes follow rules too fiddly to restate (chunk, split): ask torch."""
    import torch

    return torch.empty(shape)


def _reduced_shape(shape: tuple, op: str, dim, keepdim: bool) -> tuple:
    if op in ("softmax", "log_softmax", "cumsum", "sort", "sort_descending"):
        return shape
    if dim is None:
        return ()
    if not shape:
        return ()
    d = dim % len(shape)
    return tuple(1 if k == d else n for k, n in enumerate(shape) if keepdim or k != d)


def _factorizations(numel: int) -> list[tuple]:
    """Shapes with ``numel`` elements, up to 3 dims."""
    if numel == 0:
        return [(0,), (0, 2), (2, 0)]
    out = [(numel,), (1, numel), (numel, 1)]
    for a in range(2, numel + 1):
        if numel % a == 0:
            out.append((a, numel // a))
            for b in range(2, numel // a + 1):
                if (numel // a) % b == 0:
                    out.append((a, b, numel // a // b))
    if numel == 1:
        out.append(())
    return out


# Each entry is one draw of the step kind: repeats make a kind more likely.
STEP_KINDS = (
    ["leaf"] * 2 + ["unary"] * 3 + ["binary"] * 3 + ["reduce"] * 2 + ["view"] * 3 + ["index"] * 3
    + ["inplace"] * 3 + ["setitem"] * 2 + ["hook"] * 2 + ["retain_grad"] + ["backward"] * 3 + ["grad"]
    + ["func"] * 2 + ["detach", "clone", "take_grad", "zero_grad"]
    + ["shape_op"] * 2 + ["multi", "join", "where", "loss"]
    + (["node_hook"] if NODE_HOOKS else [])
    + ["mode_call"] * 2 + ["post_acc_hook", "set_data", "legacy_leaf"]
)


@st.composite
def programs(draw, max_steps: int = 14) -> list[tuple]:
    """A program: one to three leaves, then up to ``max_steps`` steps of any kind."""
    builder = _Builder(draw)
    for _ in range(draw(_ints(1, 3))):
        builder.leaf()
    for _ in range(draw(_ints(1, max_steps))):
        getattr(builder, _choice(draw, STEP_KINDS))()
    if draw(_ints(0, 2)):
        builder.backward()  # end most programs with a backward, the thing under test
    return builder.steps
