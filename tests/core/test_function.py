"""Custom ``Function`` semantics, as in modern PyTorch (research doc, section 4.1),
and the instance-style ``StatefulFunction``."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import minigrad
from minigrad.autograd import Function, StatefulFunction, gradcheck, gradgradcheck, once_differentiable


def leaf(values):
    return minigrad.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def close(t, expected, rtol=1e-12, atol=1e-12):
    assert t is not None, "gradient is None"
    np.testing.assert_allclose(t.detach().numpy(), expected, rtol=rtol, atol=atol)


# -- reference functions ---------------------------------------------------------------------
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = minigrad.tensor(np.exp(x.detach().numpy()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class ScaleBy(Function):
    """x * k for a Python number k: the number gets a None gradient."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None


def test_basic_function_and_gradcheck():
    x = leaf([0.1, -0.5, 1.2])
    y = Exp.apply(x)
    close(y, np.exp([0.1, -0.5, 1.2]))
    y.sum().backward()
    close(x.grad, np.exp([0.1, -0.5, 1.2]))
    assert gradcheck(Exp.apply, (leaf([0.3, 0.7]),))


def test_non_tensor_argument_passes_through_and_gets_none():
    x = leaf([1.0, 2.0])
    y = ScaleBy.apply(x, 2.5)
    y.sum().backward()
    close(x.grad, [2.5, 2.5])


def test_non_none_gradient_for_non_tensor_input_raises():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    y = Bad.apply(leaf([1.0]), 3.0)
    with pytest.raises(RuntimeError, match="not a Tensor: return None for it") as info:
        y.backward()
    assert "BadBackward" in str(info.value)
    assert "position 2" in str(info.value)


def test_wrong_gradient_count_raises():
    class TwoInputs(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad):
            return grad  # one gradient for two inputs

    y = TwoInputs.apply(leaf([1.0]), leaf([2.0]))
    with pytest.raises(RuntimeError) as info:
        y.backward()
    msg = str(info.value)
    assert "TwoInputsBackward" in msg
    assert "incorrect number of gradients" in msg
    assert re.search(r"expected 2\D.*got 1\b", msg), msg


def test_too_many_non_none_gradients_raise():
    class Extra(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2.0

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.0, grad

    y = Extra.apply(leaf([1.0]))
    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 1, got 2\)"):
        y.backward()


def test_extra_trailing_none_gradients_allowed():
    class Extra(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2.0

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.0, None, None

    x = leaf([1.0, 3.0])
    Extra.apply(x).sum().backward()
    close(x.grad, [2.0, 2.0])


def test_bare_tensor_accepted_for_single_input():
    class Double(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2.0

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.0  # not a tuple

    x = leaf([1.0])
    Double.apply(x).backward()
    close(x.grad, [2.0])


def test_wrong_gradient_shape_raises():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * 1.0 + b.sum()

        @staticmethod
        def backward(ctx, grad):
            return grad, minigrad.ones(3, dtype=minigrad.float64)  # b has shape [2]

    y = BadShape.apply(leaf([1.0, 2.0]), leaf([1.0, 2.0]))
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert "BadShapeBackward" in msg
    assert "index 1" in msg
    assert "[3]" in msg and "[2]" in msg


def test_broadcastable_gradient_is_summed_back():
    class Broad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1.0

        @staticmethod
        def backward(ctx, grad):
            # a has shape (3, 1); return a (2, 3, 4) gradient that broadcasts from it
            return minigrad.tensor(np.arange(24.0).reshape(2, 3, 4))

    x = leaf(np.zeros((3, 1)))
    Broad.apply(x).sum().backward()
    expected = np.arange(24.0).reshape(2, 3, 4).sum(axis=(0, 2)).reshape(3, 1)
    close(x.grad, expected)


def test_gradient_dtype_cast_to_input_dtype():
    class F32Grad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1.0

        @staticmethod
        def backward(ctx, grad):
            return grad.float()

    x = leaf([1.0, 2.0])
    F32Grad.apply(x).sum().backward()
    assert x.grad.dtype == minigrad.float64


def test_returned_ndarray_raises_runtime_error():
    """PyTorch raises RuntimeError ("expected Variable or None (got numpy.ndarray)") here."""

    class NumpyGrad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1.0

        @staticmethod
        def backward(ctx, grad):
            return grad.numpy()

    y = NumpyGrad.apply(leaf([1.0]))
    with pytest.raises(RuntimeError, match=r"returned ndarray at position 1: expected Tensor or None \(wrap"):
        y.backward()


def test_forward_returning_ndarray_passes_it_through_unconnected():
    """As in PyTorch: a non-Tensor result comes back unchanged (and gets no gradient)."""
    class NumpyOut(Function):
        @staticmethod
        def forward(ctx, a):
            return np.exp(a.detach().numpy())

        @staticmethod
        def backward(ctx, grad):
            return grad

    out = NumpyOut.apply(leaf([1.0]))
    assert type(out) is np.ndarray and out.tolist() == [np.e]


def test_save_for_backward_non_tensor_raises_type_error():
    class SaveNumber(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, 3.0)
            return a * 1.0

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(TypeError, match="save_for_backward can only save variables"):
        SaveNumber.apply(leaf([1.0]))


def test_save_for_backward_accepts_none():
    class SaveNone(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(None, a)
            return a * 2.0

        @staticmethod
        def backward(ctx, grad):
            nothing, a = ctx.saved_tensors
            assert nothing is None
            return grad * 2.0

    x = leaf([1.0])
    SaveNone.apply(x).backward()
    close(x.grad, [2.0])


# -- the version check -------------------------------------------------------------------------
class SaveInput(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return 2 * grad * a


def test_saved_input_modified_in_place_raises():
    x = leaf([1.0, 2.0])
    a = x.clone()
    y = SaveInput.apply(a)
    a.add_(1.0)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert "modified by an inplace operation" in msg
    assert "SaveInputBackward" in msg
    assert re.search(r"version 1.*expected version 0", msg), msg


def test_saved_output_modified_in_place_raises():
    x = leaf([1.0, 2.0])
    y = Exp.apply(x)
    y.mul_(2.0)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert "modified by an inplace operation" in msg
    assert "output 0 of ExpBackward" in msg
    assert re.search(r"version 1.*expected version 0", msg), msg


def test_unmodified_saved_tensors_pass_the_check():
    x = leaf([1.0, 2.0])
    a = x.clone()
    y = SaveInput.apply(a)
    b = a * 1.0  # reading is fine
    (y.sum() + b.sum()).backward()
    close(x.grad, [3.0, 5.0])


# -- when backward runs, and with what ---------------------------------------------------------
class Counting(Function):
    calls = 0
    needs = None

    @staticmethod
    def forward(ctx, a, b, k):
        Counting.needs = ctx.needs_input_grad
        return a * b * k

    @staticmethod
    def backward(ctx, grad):
        Counting.calls += 1
        return grad, grad, None


def test_backward_not_called_when_no_input_requires_grad():
    Counting.calls = 0
    c = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64)
    out = Counting.apply(c, c, 2.0)
    assert not out.requires_grad and out.grad_fn is None
    x = leaf([1.0, 1.0])
    (x * out).sum().backward()
    assert Counting.calls == 0
    close(x.grad, [2.0, 8.0])  # out = c * c * 2


def test_no_node_under_no_grad():
    x = leaf([1.0])
    with minigrad.no_grad():
        out = Counting.apply(x, x, 2.0)
    assert not out.requires_grad and out.grad_fn is None


def test_needs_input_grad():
    x = leaf([1.0])
    c = minigrad.tensor([2.0], dtype=minigrad.float64)
    Counting.apply(x, c, 3.0)
    assert Counting.needs == (True, False, False)
    Counting.apply(c, x, 3.0)
    assert Counting.needs == (False, True, False)


def test_returning_none_stops_gradient():
    class Stop(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 5.0

        @staticmethod
        def backward(ctx, grad):
            return None

    x = leaf([1.0])
    z = leaf([1.0])
    (Stop.apply(x) * z).sum().backward()
    assert x.grad is None
    close(z.grad, [5.0])
    x2 = leaf([2.0])
    (Stop.apply(x2) + x2 * 3.0).backward()
    close(x2.grad, [3.0])


# -- mark_dirty --------------------------------------------------------------------------------
class InplaceDouble(Function):
    """Doubles x in place; its backward deliberately returns 3*grad so we can see it ran."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(2.0)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 3.0


def test_mark_dirty_bumps_version_and_rebases_history():
    x = leaf([1.0, 2.0])
    a = x * 1.0
    version = a._version
    out = InplaceDouble.apply(a)
    assert out is a
    assert a._version > version
    assert a.grad_fn.name() == "InplaceDoubleBackward"
    close(a, [2.0, 4.0])
    a.sum().backward()
    close(x.grad, [3.0, 3.0])  # InplaceDouble's own backward ran (then MulBackward0's)


def test_mark_dirty_on_leaf_requiring_grad_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="leaf Tensor"):
        InplaceDouble.apply(x)


def test_mark_dirty_on_leaf_not_requiring_grad_is_allowed():
    c = minigrad.tensor([1.0], dtype=minigrad.float64)
    w = leaf([3.0])
    v = c._version
    out = InplaceDouble.apply(c)
    assert c._version > v and not out.requires_grad
    close(c, [2.0])
    (out * w).backward()
    close(w.grad, [2.0])


def test_dirty_tensor_not_returned_raises():
    class DirtyNotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1.0)
            ctx.mark_dirty(x)
            return x * 2.0

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.0

    with pytest.raises(RuntimeError, match="marked as dirty"):
        DirtyNotReturned.apply(leaf([1.0]) * 1.0)


def test_dirty_input_check_invalidates_earlier_saved_use():
    x = leaf([1.0, 2.0])
    a = x * 1.0
    y = SaveInput.apply(a)  # saves a at version v
    InplaceDouble.apply(a)  # changes a
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# -- returning an input as-is ------------------------------------------------------------------------
class Identity(Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 5.0  # deliberately not 1, to see that it runs


@pytest.mark.parametrize("non_leaf", [False, True])
def test_returning_input_as_is_gives_new_tensor_with_custom_backward(non_leaf):
    x = leaf([1.0, 2.0])
    inp = x * 1.0 if non_leaf else x
    out = Identity.apply(inp)
    assert out is not inp
    assert out.grad_fn is not None and out.grad_fn.name() == "IdentityBackward"
    close(out, [1.0, 2.0])
    out.sum().backward()
    close(x.grad, [5.0, 5.0])
    if not non_leaf:
        assert inp.grad_fn is None and inp.is_leaf  # the input's own history is untouched


def test_returning_input_as_is_shares_memory():
    x = leaf([1.0, 2.0])
    out = Identity.apply(x)
    with minigrad.no_grad():
        x.add_(1.0)
    close(out, [2.0, 3.0])


# -- set_materialize_grads -----------------------------------------------------------------------------
class TwoOut(Function):
    materialize = True
    got = None

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(TwoOut.materialize)
        return x * 1.0, x * 2.0

    @staticmethod
    def backward(ctx, g1, g2):
        TwoOut.got = (g1, g2)
        out = g1 if g1 is not None else minigrad.zeros_like(g2)
        return out + (g2 * 2.0 if g2 is not None else 0.0)


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(materialize):
    TwoOut.materialize = materialize
    try:
        x = leaf([1.0, 2.0])
        a, b = TwoOut.apply(x)
        b.sum().backward()
        g1, g2 = TwoOut.got
        if materialize:
            assert isinstance(g1, minigrad.Tensor)
            close(g1, [0.0, 0.0])
        else:
            assert g1 is None
        close(g2, [1.0, 1.0])
        close(x.grad, [2.0, 2.0])
    finally:
        TwoOut.materialize = True


def test_set_materialize_grads_needs_bool():
    class BadFlag(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(0)
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError):
        BadFlag.apply(leaf([1.0]))


# -- double backward ---------------------------------------------------------------------------------
class NumpyCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return minigrad.tensor(x.detach().numpy() ** 3)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return minigrad.tensor(grad.detach().numpy() * 3 * x.detach().numpy() ** 2)


def test_once_differentiable_first_order_works():
    xv = np.array([0.5, -1.5])
    x = leaf(xv)
    NumpyCube.apply(x).sum().backward()
    close(x.grad, 3 * xv**2)
    assert gradcheck(NumpyCube.apply, (leaf(xv),))


def test_once_differentiable_double_backward_raises():
    x = leaf([0.5, -1.5])
    y = NumpyCube.apply(x)
    (g,) = minigrad.autograd.grad((y * y).sum(), x, create_graph=True)
    close(g, 2 * np.array([0.5, -1.5]) ** 3 * 3 * np.array([0.5, -1.5]) ** 2)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


class TensorOpCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


def test_function_with_tensor_op_backward_supports_double_backward():
    xv = np.array([0.5, -1.5, 2.0])
    assert gradgradcheck(TensorOpCube.apply, (leaf(xv),))
    x = leaf(xv)
    (g,) = minigrad.autograd.grad(TensorOpCube.apply(x).sum(), x, create_graph=True)
    (gg,) = minigrad.autograd.grad(g.sum(), x)
    close(gg, 6 * xv)


def test_exp_function_saving_output_supports_double_backward():
    assert gradgradcheck(Exp.apply, (leaf([0.2, -0.3]),))


# -- legacy use ----------------------------------------------------------------------------------------
def test_instantiation_warns_deprecation():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        Exp()


def test_calling_an_instance_raises_legacy_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        f = Exp()
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        f(leaf([1.0]))


# -- StatefulFunction ------------------------------------------------------------------------------------
class Sigmoid(StatefulFunction):
    def forward(self, x):
        self.y = minigrad.tensor(1 / (1 + np.exp(-x.detach().numpy())))
        return self.y

    def backward(self, dy):
        return dy * self.y * (1 - self.y)


def test_stateful_function_works_once():
    xv = np.array([0.3, -1.2])
    x = leaf(xv)
    y = Sigmoid()(x)
    s = 1 / (1 + np.exp(-xv))
    close(y, s)
    y.sum().backward()
    close(x.grad, s * (1 - s))
    assert y.grad_fn.name() == "SigmoidBackward"


def test_stateful_function_second_call_raises():
    f = Sigmoid()
    f(leaf([0.1]))
    with pytest.raises(RuntimeError) as info:
        f(leaf([0.2]))
    msg = str(info.value)
    assert "Sigmoid" in msg and ("once" in msg or "new instance" in msg)


def test_stateful_function_non_tensor_input_raises_type_error():
    class Scale(StatefulFunction):
        def forward(self, x, k):
            return x * k

        def backward(self, dy):
            return dy

    with pytest.raises(TypeError):
        Scale()(leaf([1.0]), 2.0)


def test_stateful_unrelated_output_gets_none():
    got = []

    class Split(StatefulFunction):
        def forward(self, x):
            return x * 2.0, x * 3.0

        def backward(self, g1, g2):
            got.append((g1, g2))
            return g1 * 2.0 if g1 is not None else g2 * 3.0

    x = leaf([1.0, 2.0])
    a, b = Split()(x)
    b.sum().backward()
    (g1, g2), = got
    assert g1 is None
    close(g2, [1.0, 1.0])
    close(x.grad, [3.0, 3.0])


# -- node names --------------------------------------------------------------------------------------------
def test_builtin_node_names():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    assert (x * x).grad_fn.name() == "MulBackward0"
    assert (x + x).grad_fn.name() == "AddBackward0"
    assert (x - x).grad_fn.name() == "SubBackward0"
    assert (x / 2.0).grad_fn.name() == "DivBackward0"
    assert x.sum().grad_fn.name() == "SumBackward0"
    assert x.sum(0).grad_fn.name() == "SumBackward1"
    assert x.mean().grad_fn.name() == "MeanBackward0"
    assert x.exp().grad_fn.name() == "ExpBackward0"
    assert (x @ x).grad_fn.name() == "MmBackward0"
    assert (x @ x[0]).grad_fn.name() == "MvBackward0"
    assert (x[0] @ x[1]).grad_fn.name() == "DotBackward0"
    assert (-x).grad_fn.name() == "NegBackward0"
    assert x.tanh().grad_fn.name() == "TanhBackward0"
    assert x.relu().grad_fn.name() == "ReluBackward0"
    assert x.sigmoid().grad_fn.name() == "SigmoidBackward0"
    assert x.log().grad_fn.name() == "LogBackward0"
    assert x.sqrt().grad_fn.name() == "SqrtBackward0"
    assert (x ** 2).grad_fn.name() == "PowBackward0"
    assert x.transpose(0, 1).grad_fn.name() == "TransposeBackward0"
    assert x.permute(1, 0).grad_fn.name() == "PermuteBackward0"
    assert x.unsqueeze(0).grad_fn.name() == "UnsqueezeBackward0"
    assert x.softmax(1).grad_fn.name() == "SoftmaxBackward0"
    assert x.log_softmax(1).grad_fn.name() == "LogSoftmaxBackward0"
    assert x.clone().grad_fn.name() == "CloneBackward0"
    assert x.view(4).grad_fn.name() == "ViewBackward0"
    assert x.expand(2, 2, 2).grad_fn.name() == "ExpandBackward0"
    assert minigrad.cat([x, x]).grad_fn.name() == "CatBackward0"
    assert minigrad.stack([x, x]).grad_fn.name() == "StackBackward0"


def test_custom_node_name():
    assert Exp.apply(leaf([1.0])).grad_fn.name() == "ExpBackward"
    assert ScaleBy.apply(leaf([1.0]), 2).grad_fn.name() == "ScaleByBackward"
    assert type(Exp.apply(leaf([1.0])).grad_fn).__name__ == "ExpBackward"


def test_setup_context_variant_keeps_forward_pure():
    """forward(*args) without ctx, and setup_context(ctx, inputs, output) saving what backward needs."""
    import minigrad
    from minigrad.autograd import Function, gradcheck

    calls = []

    class Exp(Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            calls.append((len(inputs), output.shape))
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad):
            out, = ctx.saved_tensors
            return grad * out

    x = minigrad.randn(4, dtype=minigrad.float64, requires_grad=True)
    y = Exp.apply(x)
    assert calls == [(1, (4,))]
    assert y.grad_fn.name() == "ExpBackward"
    assert gradcheck(Exp.apply, (x,))
