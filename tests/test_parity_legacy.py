"""Issue 27's missing names, each run on minigrad and on torch and compared: the legacy
``Variable`` and typed constructors (``FloatTensor``...), ``inf``/``nan``/``pi``/``e``,
``format`` of a tensor, ``utils.checkpoint`` after ``import``, ``backends.cuda.matmul``'s
switches, and ``amp``'s ``GradScaler``/``autocast`` (CPU-only PyTorch's behaviour)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tests.test_parity_regressions import same

torch = pytest.importorskip("torch")

import minigrad  # noqa: E402


@pytest.mark.parametrize("case", [
    lambda lib: lib.autograd.Variable(lib.ones(2), requires_grad=True),
    lambda lib: lib.autograd.Variable(lib.ones(2)).requires_grad,
    lambda lib: lib.autograd.Variable(lib.ones(2), requires_grad=True).is_leaf,
    lambda lib: lib.autograd.Variable(),
    lambda lib: lib.autograd.Variable([1, 2]),
    lambda lib: lib.autograd.Variable(lib.ones(2), volatile=True),
    lambda lib: isinstance(lib.ones(2), lib.autograd.Variable),
    lambda lib: isinstance([1], lib.autograd.Variable),
    lambda lib: (lambda a: (lib.autograd.Variable(a).data_ptr() == a.data_ptr(),
                            lib.autograd.Variable(a) is a))(lib.ones(2)),
])
def test_variable(case):
    same(case)


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor",
                                  "ByteTensor"])
@pytest.mark.parametrize("args", [(), ([1, 0, 2],), ([[1.7, -1.2], [3, 4]],), (2, 3), (0,), (3,), ((2, 3),),
                                  (2.5,), (2, 3.0), (2, -1), ("size",), (np.array([1, 2]),)])
def test_legacy_constructors(name, args):
    """Values for data; shapes (the values are uninitialised in PyTorch) for sizes; the same errors."""
    if name == "ByteTensor" and repr(args) == "([[1.7, -1.2], [3, 4]],)":
        args = ([[1.7, 1.2], [3, 4]],)  # (minigrad.tensor([-1.2], dtype=uint8) wraps where PyTorch raises)

    def prog(lib):
        out = getattr(lib, name)(*args)
        return (out.dtype == getattr(lib, name).dtype, tuple(out.shape),
                out if len(args) == 1 and not isinstance(args[0], int) else None)
    same(prog)


@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "BoolTensor"])
def test_legacy_isinstance_and_size_and_tensor_arguments(name):
    def prog(lib):
        cls = getattr(lib, name)
        kinds = [isinstance(lib.ones(2, dtype=d), cls) for d in (lib.float32, lib.float64, lib.int64, lib.bool)]
        own = lib.ones(2, dtype=cls.dtype)
        alias = cls(own)
        return (kinds, isinstance(1.0, cls), tuple(cls(lib.Size([2, 3])).shape), alias is own,
                alias.data_ptr() == own.data_ptr(), lib.ones(2).type(cls).dtype == cls.dtype)
    same(prog)
    same(lambda lib: getattr(lib, name)(lib.ones(2, dtype=lib.int32)))  # another dtype: TypeError
    same(lambda lib: getattr(lib, name)([1], requires_grad=True))


def test_legacy_constructor_of_a_tensor_that_requires_grad_is_a_differentiable_alias():
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.FloatTensor(a)
        (b * 3).sum().backward()
        return b.requires_grad, b.is_leaf, a.grad
    same(prog)


def test_constants():
    for name, value in (("inf", math.inf), ("pi", math.pi), ("e", math.e)):
        assert getattr(minigrad, name) == getattr(torch, name) == value
        assert type(getattr(minigrad, name)) is type(getattr(torch, name)) is float
    assert math.isnan(minigrad.nan) and math.isnan(torch.nan)


@pytest.mark.parametrize("value, spec", [(1.23456, ".4f"), (3, "d"), (3, "05d"), (2.5, ""), (True, ""),
                                         ([1.5], ""), ([1.5], ".2f"), ([[1, 2]], ""), (2.0, "e"), (3, ".2f")])
def test_format(value, spec):
    """nanoGPT's train.py prints f"{loss:.4f}" of 0-d tensors."""
    same(lambda lib: format(lib.tensor(value), spec))


def test_utils_checkpoint_is_reachable_after_import():
    code = "import {lib}; f = {lib}.utils.checkpoint.checkpoint; print(callable(f))"
    import subprocess
    import sys
    for lib in ("minigrad", "torch"):
        out = subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True, text=True)
        assert out.stdout.strip() == "True", (lib, out.stderr[-500:])


@pytest.mark.parametrize("name, value", [
    ("allow_tf32", True), ("allow_tf32", 1), ("allow_fp16_reduced_precision_reduction", False),
    ("allow_fp16_reduced_precision_reduction", 1), ("allow_bf16_reduced_precision_reduction", (False, True)),
    ("allow_bf16_reduced_precision_reduction", (1, 2)), ("allow_fp16_accumulation", True),
    ("allow_fp16_accumulation", 3), ("fp32_precision", "xx"), ("nope", True)])
def test_backends_cuda_matmul_switches(name, value):
    def prog(lib):
        matmul = lib.backends.cuda.matmul
        before = {k: getattr(matmul, k) for k in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                                                   "allow_bf16_reduced_precision_reduction",
                                                   "allow_fp16_accumulation")}
        try:
            setattr(matmul, name, value)
            return before, getattr(matmul, name), lib.get_float32_matmul_precision()
        finally:
            for k in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
                      "allow_fp16_accumulation"):
                setattr(matmul, k, before[k])
            lib.set_float32_matmul_precision("highest")
    same(prog)
    same(lambda lib: (lib.backends.cuda.is_built(), lib.backends.cuda.flash_sdp_enabled(), lib.cuda.is_bf16_supported()))


def _warned(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, sorted({w.category.__name__ for w in caught})


@pytest.mark.parametrize("make", [
    lambda lib: lib.cuda.amp.GradScaler(enabled=False),
    lambda lib: lib.cuda.amp.GradScaler(),
    lambda lib: lib.amp.GradScaler(),
    lambda lib: lib.amp.GradScaler("cuda", enabled=False),
    lambda lib: lib.amp.GradScaler("cpu"),
    lambda lib: lib.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2),
])
def test_grad_scaler_training_steps(make):
    """Three SGD steps through a scaler, one with an inf gradient: the weights, the scale and its
    state, and the warnings, as in CPU-only PyTorch."""
    def prog(lib):
        scaler, warned = _warned(lambda: make(lib))
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scales = []
        for step, x in enumerate(([1.0, 2.0], [math.inf, 1.0], [0.5, 0.5], [1.0, 1.0])):
            loss = (w * lib.tensor(x)).sum()
            scaler.scale(loss).backward()
            if step == 2:
                scaler.unscale_(opt)
                lib.nn.utils.clip_grad_norm_([w], 0.1)
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
            scales.append(scaler.get_scale())
        return w, scales, scaler.is_enabled(), scaler.state_dict(), warned
    same(prog)


@pytest.mark.parametrize("misuse", ["unscale twice", "step twice", "step first", "closure", "growth", "empty load"])
def test_grad_scaler_misuse(misuse):
    def prog(lib):
        if misuse == "growth":
            return lib.amp.GradScaler("cpu", growth_factor=0.5)
        scaler = lib.amp.GradScaler("cpu")
        w = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        if misuse == "step first":
            return scaler.step(opt)
        if misuse == "empty load":
            return scaler.load_state_dict({})
        scaler.scale((w * 2).sum()).backward()
        if misuse == "closure":
            return scaler.step(opt, closure=lambda: 0)
        scaler.unscale_(opt)
        if misuse == "unscale twice":
            scaler.unscale_(opt)
        scaler.step(opt)
        scaler.step(opt)
    same(prog)


@pytest.mark.parametrize("make", [
    lambda lib: lib.autocast("cpu"), lambda lib: lib.autocast("cpu", dtype=lib.float32),
    lambda lib: lib.autocast("cpu", enabled=False), lambda lib: lib.amp.autocast(device_type="cuda"),
    lambda lib: lib.cuda.amp.autocast(), lambda lib: lib.autocast(3), lambda lib: lib.autocast("xyz"),
])
def test_autocast_states(make):
    """Whether autocast reports itself enabled, inside and after, and its warnings (PyTorch's CPU autocast
    also computes matmuls in bfloat16, minigrad's does not: the README's known differences)."""
    def prog(lib):
        ctx, warned = _warned(lambda: make(lib))
        with ctx:
            inside = (lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled("cuda"), lib.is_autocast_enabled())
        return inside, lib.is_autocast_enabled("cpu"), warned

    same(prog)


def test_autocast_as_a_decorator():
    def prog(lib):
        @lib.autocast("cpu")
        def f(x):
            return lib.is_autocast_enabled("cpu"), x * 2
        return f(lib.ones(2)), lib.is_autocast_enabled("cpu")
    same(prog)


# -- float16 (NumPy's half) and bfloat16 (a name with a clear error) ----------------------------------
_HALF_CASES = {
    "arith": lambda L, a: a * 2.5 + a / 3 - 1, "int_times_half": lambda L, a: a * L.tensor([[1, 2, 3, 4]]),
    "matmul": lambda L, a: a @ a.t(), "sum_mean": lambda L, a: a.sum() + a.mean(), "exp": lambda L, a: a.exp(),
    "softmax": lambda L, a: a.softmax(-1), "relu_tanh_sigmoid": lambda L, a: L.relu(a) + a.tanh() + a.sigmoid(),
    "gelu": lambda L, a: L.nn.functional.gelu(a), "layer_norm": lambda L, a: L.nn.functional.layer_norm(a, (4,)),
    "cross_entropy": lambda L, a: L.nn.functional.cross_entropy(a, L.tensor([0, 1, 2])),
    "attention": lambda L, a: L.nn.functional.scaled_dot_product_attention(a[None], a[None], a[None], is_causal=True),
    "conv1d": lambda L, a: L.nn.functional.conv1d(a[None], a[:2, :3, None]),
    "promote": lambda L, a: a + L.ones(4), "zero_dim_float": lambda L, a: a + L.tensor(1.5, dtype=L.float64),
}


@pytest.mark.parametrize("name", sorted(_HALF_CASES))
def test_float16_values_gradients_and_dtypes(name):
    """float16 tensors, as PyTorch's on the CPU: the result's dtype, values and gradients (within half's
    precision: both libraries compute in float32 and round)."""
    data = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float16)

    def prog(lib):
        a = lib.tensor(data, requires_grad=True)
        out = _HALF_CASES[name](lib, a)
        out.float().sum().backward()
        return str(out.dtype).split(".")[1], str(a.grad.dtype).split(".")[1], out.detach().float(), a.grad.float()
    m, t = (prog(lib) for lib in (minigrad, torch))
    assert m[:2] == tuple(t[:2])
    for mine, theirs in zip(m[2:], t[2:]):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=4e-3, atol=4e-3)


def test_half_conversions_and_names():
    same(lambda lib: (lib.ones(2).half(), lib.ones(2).half().dtype == lib.float16 == lib.half,
                      lib.HalfTensor([1, 2]).dtype == lib.float16, lib.ones(1).half().type().split(".")[1],
                      lib.finfo(lib.float16).eps, lib.finfo(lib.bfloat16).eps, lib.finfo(lib.bfloat16).max,
                      lib.finfo(lib.bfloat16).tiny, lib.bfloat16.is_floating_point, lib.float16.is_floating_point,
                      lib.nn.Linear(2, 2).half().weight.dtype == lib.float16))
    ptdtype = {"float32": minigrad.float32, "bfloat16": minigrad.bfloat16, "float16": minigrad.float16}  # train.py
    assert ptdtype["float16"] == minigrad.half


@pytest.mark.parametrize("use", [lambda m: m.ones(2, dtype=m.bfloat16), lambda m: m.ones(2).to(m.bfloat16),
                                 lambda m: m.tensor([1.0], dtype=m.bfloat16), lambda m: m.ones(2).bfloat16(),
                                 lambda m: m.nn.Linear(2, 2).bfloat16()])
def test_bfloat16_is_a_clear_type_error(use):
    """NumPy has no bfloat16: minigrad names it and says what to use (float32, or float16)."""
    with pytest.raises(TypeError, match="bfloat16.*float32.*(float16|half)"):
        use(minigrad)
