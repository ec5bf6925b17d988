"""PyTorch's global switches and small helpers, side by side with torch: default dtype,
inference mode, seeds, is_tensor, and the in-place random fills."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")
LIBS = [minigrad, torch]


@pytest.fixture
def default_dtype_restored():
    yield
    minigrad.set_default_dtype(minigrad.float32)
    torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("make", ["tensor([1.5])", "zeros(2)", "ones(2)", "randn(2)", "rand(2)", "full((2,), 1.5)",
                                  "arange(0.0, 1.0, 0.5)", "linspace(0, 1, 3)", "tensor([1, 2]) * 1.5",
                                  "tensor([1, 2]) / 2", "tensor([1.5], dtype=lib.float32)", "tensor([1, 2])"])
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_the_default_dtype_decides_as_in_torch(make, default, default_dtype_restored):
    dtypes = []
    for lib in LIBS:
        lib.set_default_dtype(getattr(lib, default))
        assert lib.get_default_dtype() is getattr(lib, default)
        dtypes.append(str(eval(f"lib.{make}").dtype).split(".")[-1])
    assert dtypes[0] == dtypes[1]


@pytest.mark.parametrize("bad", ["int64", "int32", "bool"])
def test_only_float_types_can_be_the_default(bad, default_dtype_restored):
    for lib in LIBS:
        with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
            lib.set_default_dtype(getattr(lib, bad))
        assert lib.get_default_dtype() is lib.float32


def test_inference_mode_as_in_torch():
    for lib in LIBS:
        w = lib.ones(2, requires_grad=True)
        assert not lib.is_inference_mode_enabled()
        with lib.inference_mode():
            assert lib.is_inference_mode_enabled() and not lib.is_grad_enabled()
            assert not (w * 2).requires_grad
            with lib.inference_mode(False):  # switches it off for one block, and grad mode on
                assert not lib.is_inference_mode_enabled()
                assert (w * 2).requires_grad
            assert lib.is_inference_mode_enabled()
        with lib.inference_mode(False):
            assert (w * 2).requires_grad
        with lib.no_grad(), lib.inference_mode(False):
            assert (w * 2).requires_grad
        assert not lib.is_inference_mode_enabled() and lib.is_grad_enabled()

        @lib.inference_mode
        def bare():
            return w * 2

        @lib.inference_mode()
        def called():
            return w * 2

        @lib.inference_mode(False)
        def off():
            return w * 2

        assert not bare().requires_grad and not called().requires_grad and off().requires_grad
        assert lib.autograd.inference_mode is lib.inference_mode


def test_inference_mode_is_left_on_an_exception():
    with pytest.raises(ValueError):
        with minigrad.inference_mode():
            raise ValueError
    assert not minigrad.is_inference_mode_enabled() and minigrad.is_grad_enabled()


def test_seeds_as_in_torch():
    for lib in LIBS:
        lib.manual_seed(5)
        assert lib.initial_seed() == 5
        first = lib.randn(3)
        lib.manual_seed(5)
        np.testing.assert_array_equal(lib.randn(3).numpy(), first.numpy())
        s = lib.seed()
        assert isinstance(s, int) and lib.initial_seed() == s
        drawn = lib.randn(3)
        lib.manual_seed(s)
        np.testing.assert_array_equal(lib.randn(3).numpy(), drawn.numpy())
    minigrad.manual_seed(0)


@pytest.mark.parametrize("obj", ["lib.ones(2)", "lib.nn.Parameter(lib.ones(2))", "3", "[1.0]", "np.ones(2)", "None"])
def test_is_tensor_as_in_torch(obj):
    assert minigrad.is_tensor(eval(obj.replace("lib", "minigrad"))) == torch.is_tensor(eval(obj.replace("lib", "torch")))


def test_nelement_is_numel():
    for lib in LIBS:
        assert lib.zeros(2, 3).nelement() == lib.zeros(2, 3).numel() == 6


@pytest.mark.parametrize("fill, args, check", [
    ("uniform_", (-2.0, 3.0), lambda v: v.min() >= -2.0 and v.max() < 3.0 and abs(v.mean() - 0.5) < 0.1),
    ("uniform_", (), lambda v: v.min() >= 0.0 and v.max() < 1.0 and abs(v.mean() - 0.5) < 0.02),
    ("normal_", (1.0, 2.0), lambda v: abs(v.mean() - 1.0) < 0.1 and abs(v.std() - 2.0) < 0.1),
    ("normal_", (), lambda v: abs(v.mean()) < 0.05 and abs(v.std() - 1.0) < 0.05),
])
def test_random_fills_in_place(fill, args, check):
    """10,000 draws: the mean's tolerance is over 5 standard errors, so a correct fill passes."""
    for lib in LIBS:
        x = lib.zeros(100, 100, dtype=lib.float64)
        version = x._version
        assert getattr(x, fill)(*args) is x
        assert x._version > version and x.dtype == lib.float64
        assert check(x.numpy())


@pytest.mark.parametrize("fill", ["uniform_", "normal_"])
def test_random_fill_of_a_leaf_that_requires_grad_is_refused_as_in_torch(fill):
    for lib in LIBS:
        w = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf .* requires grad .* in-place operation"):
            getattr(w, fill)()
        with lib.no_grad():
            getattr(w, fill)()  # how nn.init does it
        assert w.requires_grad and w.grad_fn is None
