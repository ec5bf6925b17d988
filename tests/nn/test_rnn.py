"""The recurrent layers (RNN, LSTM, GRU and their cells) against PyTorch, and by gradcheck.

The torch comparisons draw the sizes and every option with hypothesis, build the layer in both
libraries, copy torch's weights into minigrad through ``load_state_dict`` (so the names and shapes
must agree), run the same input and initial state, and compare the outputs, the final states and
the gradients of the input, the initial state and every parameter, in float64 to a few ulps per
operation along the longest path and in float32 to the same scaled by float32's epsilon. Bad
input must raise torch's exception type. The gradchecks need no torch; the rest skip without it.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad import nn
from minigrad.autograd import grad, gradcheck, gradgradcheck
from minigrad.nn.ops import rnn as steps

try:
    import torch
except ImportError:  # the comparisons skip; the gradchecks still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (the [torch] extra)")
LAYERS = ("RNN", "LSTM", "GRU")
CELLS = ("RNNCell", "LSTMCell", "GRUCell")


def _leaf(rng, *shape):
    return minigrad.tensor(rng.standard_normal(shape), dtype=minigrad.float64, requires_grad=True)


# -- finite differences, without torch ------------------------------------------------------------------------
def test_gradcheck_and_gradgradcheck_of_a_stacked_bidirectional_lstm():
    minigrad.manual_seed(0)
    lstm = nn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=2).double()
    rng = np.random.default_rng(0)
    leaves = [_leaf(rng, 3, 2, 2), _leaf(rng, 4, 2, 2), _leaf(rng, 4, 2, 3)]

    def fn(x, h0, c0):
        output, (h_n, c_n) = lstm(x, (h0, c0))
        return output.sum() + (h_n * c_n[..., :2]).sum()

    assert gradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", ["GRU", "RNN", "GRUCell"])
def test_gradcheck_of_gru_and_rnn(name):
    minigrad.manual_seed(1)
    layer = getattr(nn, name)(2, 3).double()
    rng = np.random.default_rng(1)
    shape = (2, 3) if name.endswith("Cell") else (1, 2, 3)
    leaves = [_leaf(rng, *(2, 2) if name.endswith("Cell") else (3, 2, 2)), _leaf(rng, *shape)]

    def fn(x, h0):
        out = layer(x, h0)
        return out if name.endswith("Cell") else out[0].sum() + out[1].sum()

    assert gradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["lstm", "gru"]), st.integers(0, 3), st.integers(1, 4), st.booleans(),
       st.sampled_from(["float64", "float32"]), st.integers(0, 2 ** 16))
def test_fused_steps_match_their_definition(kind, batch, hidden, bias, dtype, seed):
    """The one-node LSTM/GRU steps against the same step from tensor operations: the values, the gradients
    of every input from the NumPy backward, and under create_graph the second derivatives."""
    fused_step, step = (steps.fused_lstm_step, steps.lstm_step) if kind == "lstm" else \
        (steps.fused_gru_step, steps.gru_step)
    gates, rng = (4 if kind == "lstm" else 3), np.random.default_rng(seed)

    def leaf(*shape):
        return minigrad.tensor(rng.standard_normal(shape), dtype=getattr(minigrad, dtype), requires_grad=True)

    gi, w_hh = leaf(batch, gates * hidden), leaf(gates * hidden, hidden)
    state = (leaf(batch, hidden), leaf(batch, hidden)) if kind == "lstm" else (leaf(batch, hidden),)
    b_hh = leaf(gates * hidden) if bias else None
    inputs = [t for t in (gi, *state, w_hh, b_hh) if t is not None]
    upstream = [minigrad.tensor(rng.standard_normal((batch, hidden)), dtype=getattr(minigrad, dtype)) for _ in state]
    tol = 64 * float(np.finfo(dtype).eps) * (hidden + 2)

    def agree(actual, expected):
        for a, b in zip(actual, expected, strict=True):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)

    composed = step(gi, state, w_hh, b_hh)
    firsts = grad(composed, inputs, upstream, create_graph=True)
    fused = fused_step(gi, state, w_hh, b_hh)
    assert fused[0].grad_fn.name() == f"ThnnFused{kind.capitalize()}CellBackward0"
    agree(fused, composed)
    sum((out * u).sum() for out, u in zip(fused, upstream)).backward()  # the NumPy backward
    agree([t.grad for t in inputs], firsts)
    fused_firsts = grad(fused_step(gi, state, w_hh, b_hh), inputs, upstream, create_graph=True)
    agree(grad([(g * g).sum() for g in fused_firsts], inputs), grad([(g * g).sum() for g in firsts], inputs))


def test_parameters_start_uniform_in_plus_minus_one_over_sqrt_hidden_size():
    minigrad.manual_seed(2)
    for layer in (nn.LSTM(5, 16, num_layers=2, bidirectional=True, proj_size=4), nn.GRUCell(5, 16)):
        bound = 1 / math.sqrt(16)
        values = np.concatenate([p.detach().numpy().ravel() for p in layer.parameters()])
        assert np.all(np.abs(values) <= bound)
        assert values.min() < -0.95 * bound and values.max() > 0.95 * bound
        assert abs(values.mean()) < 0.05 * bound and abs(values.std() - bound / math.sqrt(3)) < 0.05 * bound


def test_dropout_between_layers_only_in_training():
    minigrad.manual_seed(3)
    gru = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = minigrad.randn(5, 2, 3)
    train_a, train_b = (gru(x)[0].detach().numpy() for _ in range(2))
    eval_a, eval_b = (gru.eval()(x)[0].detach().numpy() for _ in range(2))
    assert np.array_equal(eval_a, eval_b)
    assert not np.allclose(train_a, train_b)
    assert not np.allclose(train_a, eval_a)


def test_warns_like_torch_for_dropout_with_one_layer_and_points_at_the_caller():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1") as record:
        nn.LSTM(3, 4, dropout=0.2)
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.LSTM(3, 4, num_layers=2, dropout=0.2)


def test_isinstance_and_flatten_parameters():
    lstm = nn.LSTM(3, 4)
    before = [p.detach().numpy().copy() for p in lstm.parameters()]
    assert lstm.flatten_parameters() is None
    assert all(np.array_equal(a, p.detach().numpy()) for a, p in zip(before, lstm.parameters()))
    assert all(isinstance(getattr(nn, name)(3, 4), nn.RNNBase) for name in LAYERS)
    assert all(isinstance(getattr(nn, name)(3, 4), nn.RNNCellBase) for name in CELLS)


def test_double_after_construction_is_used_by_forward():
    gru = nn.GRU(3, 4).double()
    output, h_n = gru(minigrad.randn(2, 3, dtype=minigrad.float64))
    assert output.dtype == h_n.dtype == minigrad.float64


# -- against torch ---------------------------------------------------------------------------------------------
def _tolerance(dtype: str, path: int) -> float:
    """A few ulps per operation along the longest chain of operations (steps x layers x the sums in each)."""
    return 32 * float(np.finfo(dtype).eps) * path


def _copy_weights(torch_module, module) -> None:
    state = {k: minigrad.tensor(v.detach().numpy()) for k, v in torch_module.state_dict().items()}
    module.load_state_dict(state)  # strict: the names must be the same


def _grads_agree(torch_tensors, tensors, tol) -> None:
    for a, b in zip(torch_tensors, tensors, strict=True):
        expected = None if a.grad is None else a.grad.numpy()
        actual = None if b.grad is None else b.grad.numpy()
        assert (expected is None) == (actual is None)
        if expected is not None:
            np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def _run_both(make, inputs: list, dtype: str, tol: float) -> None:
    """``make(nn)`` in both libraries with torch's weights, called on ``inputs`` (NumPy arrays, a tuple for
    (h0, c0), None); outputs and every gradient must agree."""
    torch.manual_seed(0)
    torch_module, module = make(torch.nn), make(nn)
    assert repr(module) == repr(torch_module)
    assert [(n, tuple(p.shape)) for n, p in module.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in torch_module.named_parameters()]
    _copy_weights(torch_module, module)

    def tensors(lib, value):
        if value is None:
            return None
        if isinstance(value, tuple):
            return tuple(tensors(lib, v) for v in value)
        return lib.tensor(value, dtype=getattr(lib, dtype), requires_grad=True)

    results = []
    for lib, layer in ((torch, torch_module), (minigrad, module)):
        args = [tensors(lib, value) for value in inputs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch's: "LSTM with projections is not supported with oneDNN")
            out = layer(*args)
        flat = [t for part in (out if isinstance(out, tuple) else (out,))
                for t in (part if isinstance(part, tuple) else (part,))]
        rng = np.random.default_rng(1)
        total = sum((t * lib.tensor(rng.standard_normal(tuple(t.shape)), dtype=getattr(lib, dtype))).sum()
                    for t in flat)
        total.backward()
        leaves = [t for a in args if a is not None for t in (a if isinstance(a, tuple) else (a,))]
        results.append((flat, leaves, list(layer.parameters())))
    (t_out, t_leaves, t_params), (m_out, m_leaves, m_params) = results
    assert [tuple(t.shape) for t in m_out] == [tuple(t.shape) for t in t_out]
    for a, b in zip(t_out, m_out):
        assert b.dtype == getattr(minigrad, dtype)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)
    _grads_agree(t_leaves, m_leaves, tol)
    _grads_agree(t_params, m_params, tol)


@st.composite
def layers(draw):
    """(make(nn), input arrays, dtype, longest path): a layer, its options and a call, batched or not."""
    name = draw(st.sampled_from(LAYERS))
    hidden = draw(st.integers(1, 4))
    options = {"num_layers": draw(st.integers(1, 3)), "bias": draw(st.booleans()),
               "batch_first": draw(st.booleans()), "bidirectional": draw(st.booleans())}
    if name == "RNN":
        options["nonlinearity"] = draw(st.sampled_from(["tanh", "relu"]))
    if name == "LSTM" and hidden > 1 and draw(st.booleans()):
        options["proj_size"] = draw(st.integers(1, hidden - 1))
    input_size, length = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    batch = draw(st.none() | st.integers(0, 3))  # None: unbatched input
    dtype = draw(st.sampled_from(["float64", "float32"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))

    def array(*shape):
        return rng.standard_normal([s for s in shape if s is not None])

    x = array(batch, length, input_size) if options["batch_first"] else array(length, batch, input_size)
    inputs = [x]
    if draw(st.booleans()):
        states = options["num_layers"] * (2 if options["bidirectional"] else 1)
        h0 = array(states, batch, options.get("proj_size", hidden))
        inputs.append((h0, array(states, batch, hidden)) if name == "LSTM" else h0)

    def make(lib):
        factory = torch if lib is torch.nn else minigrad
        return getattr(lib, name)(input_size, hidden, **options, dtype=getattr(factory, dtype))

    return make, inputs, dtype, length * options["num_layers"] * (2 + input_size + hidden)


@needs_torch
@settings(max_examples=120, deadline=None)
@given(layers())
def test_layers_match_torch(case):
    make, inputs, dtype, path = case
    _run_both(make, inputs, dtype, _tolerance(dtype, path))


@st.composite
def cells(draw):
    name = draw(st.sampled_from(CELLS))
    input_size, hidden, bias = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.booleans())
    options = {"bias": bias}
    if name == "RNNCell":
        options["nonlinearity"] = draw(st.sampled_from(["tanh", "relu"]))
    batch = draw(st.none() | st.integers(0, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))

    def array(*shape):
        return rng.standard_normal([s for s in shape if s is not None])

    inputs = [array(batch, input_size)]
    if draw(st.booleans()):
        inputs.append((array(batch, hidden), array(batch, hidden)) if name == "LSTMCell" else array(batch, hidden))
    dtype = draw(st.sampled_from(["float64", "float32"]))

    def make(lib):
        factory = torch if lib is torch.nn else minigrad
        return getattr(lib, name)(input_size, hidden, **options, dtype=getattr(factory, dtype))

    return make, inputs, dtype, 4 + input_size + hidden


@needs_torch
@settings(max_examples=60, deadline=None)
@given(cells())
def test_cells_match_torch(case):
    make, inputs, dtype, path = case
    _run_both(make, inputs, dtype, _tolerance(dtype, path))


@needs_torch
@pytest.mark.parametrize("name", LAYERS)
def test_dropout_one_drops_every_layer_but_the_last_like_torch(name):
    """p=1 zeroes the inputs of layers 2 and 3 whatever the random mask, so the two libraries must agree."""
    options = {"num_layers": 3, "dropout": 1.0, "bidirectional": True}
    x = np.random.default_rng(4).standard_normal((4, 2, 3))
    _run_both(lambda lib: getattr(lib, name)(3, 2, **options).double(), [x], "float64", _tolerance("float64", 100))


@needs_torch
def test_dropout_in_eval_mode_matches_torch():
    torch.manual_seed(0)
    torch_lstm = torch.nn.LSTM(3, 4, num_layers=2, dropout=0.5).double().eval()
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5).double().eval()
    _copy_weights(torch_lstm, lstm)
    x = np.random.default_rng(5).standard_normal((4, 2, 3))
    expected = torch_lstm(torch.tensor(x))[0].detach().numpy()
    np.testing.assert_allclose(lstm(minigrad.tensor(x))[0].detach().numpy(), expected, rtol=1e-12, atol=1e-12)


@needs_torch
def test_dropout_warning_matches_torch():
    messages = []
    for lib in (torch.nn, nn):
        with pytest.warns(UserWarning) as record:
            lib.GRU(3, 4, dropout=0.3)
        messages.append([str(w.message) for w in record])
    assert messages[0] == messages[1]


@needs_torch
@pytest.mark.parametrize("name", LAYERS + CELLS)
def test_all_weights_and_state_dict_keys_match_torch(name):
    options = {"num_layers": 2, "bidirectional": True, "proj_size": 2} if name == "LSTM" else {}
    torch_layer, layer = getattr(torch.nn, name)(3, 4, **options), getattr(nn, name)(3, 4, **options)
    assert list(layer.state_dict()) == list(torch_layer.state_dict())
    if not name.endswith("Cell"):
        assert [[tuple(p.shape) for p in ps] for ps in layer.all_weights] == \
            [[tuple(p.shape) for p in ps] for ps in torch_layer.all_weights]


BAD_CALLS = {  # name: (make(nn), call(layer, lib)) that torch refuses
    "input 4-D": (lambda nn: nn.GRU(3, 4), lambda m, lib: m(lib.zeros(1, 2, 3, 3))),
    "input 1-D": (lambda nn: nn.RNN(3, 4), lambda m, lib: m(lib.zeros(3))),
    "input_size": (lambda nn: nn.LSTM(3, 4), lambda m, lib: m(lib.zeros(5, 2, 2))),
    "input_size unbatched": (lambda nn: nn.RNN(3, 4), lambda m, lib: m(lib.zeros(5, 2))),
    "input dtype": (lambda nn: nn.GRU(3, 4), lambda m, lib: m(lib.zeros(5, 2, 3, dtype=lib.float64))),
    "empty sequence": (lambda nn: nn.RNN(3, 4, batch_first=True), lambda m, lib: m(lib.zeros(2, 0, 3))),
    "h0 2-D for batched input": (lambda nn: nn.RNN(3, 4), lambda m, lib: m(lib.zeros(5, 2, 3), lib.zeros(2, 4))),
    "h0 3-D for unbatched input": (lambda nn: nn.GRU(3, 4), lambda m, lib: m(lib.zeros(5, 3), lib.zeros(1, 1, 4))),
    "h0 batch": (lambda nn: nn.GRU(3, 4), lambda m, lib: m(lib.zeros(5, 2, 3), lib.zeros(1, 3, 4))),
    "h0 layers": (lambda nn: nn.RNN(3, 4, 2), lambda m, lib: m(lib.zeros(5, 2, 3), lib.zeros(1, 2, 4))),
    "h0 directions": (lambda nn: nn.GRU(3, 4, bidirectional=True),
                      lambda m, lib: m(lib.zeros(5, 2, 3), lib.zeros(1, 2, 4))),
    "h0 dtype": (lambda nn: nn.RNN(3, 4), lambda m, lib: m(lib.zeros(5, 2, 3), lib.zeros(1, 2, 4, dtype=lib.float64))),
    "lstm c0 2-D": (lambda nn: nn.LSTM(3, 4), lambda m, lib: m(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4),
                                                                                     lib.zeros(2, 4)))),
    "lstm c0 size": (lambda nn: nn.LSTM(3, 4), lambda m, lib: m(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4),
                                                                                      lib.zeros(1, 2, 3)))),
    "lstm h0 not projected": (lambda nn: nn.LSTM(3, 4, proj_size=2),
                              lambda m, lib: m(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 2, 4)))),
    "lstm hx a tensor": (lambda nn: nn.LSTM(3, 4), lambda m, lib: m(lib.zeros(5, 2, 3), lib.zeros(1, 2, 4))),
    "cell input 3-D": (lambda nn: nn.GRUCell(3, 4), lambda m, lib: m(lib.zeros(1, 2, 3))),
    "cell hx 3-D": (lambda nn: nn.RNNCell(3, 4), lambda m, lib: m(lib.zeros(2, 3), lib.zeros(1, 2, 4))),
    "cell input_size": (lambda nn: nn.LSTMCell(3, 4), lambda m, lib: m(lib.zeros(2, 5))),
    "cell batch": (lambda nn: nn.GRUCell(3, 4), lambda m, lib: m(lib.zeros(2, 3), lib.zeros(3, 4))),
    "cell hidden_size": (lambda nn: nn.RNNCell(3, 4), lambda m, lib: m(lib.zeros(2, 3), lib.zeros(2, 5))),
    "lstm cell c hidden_size": (lambda nn: nn.LSTMCell(3, 4),
                                lambda m, lib: m(lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(2, 5)))),
    "cell unbatched input, batched hx": (lambda nn: nn.GRUCell(3, 4), lambda m, lib: m(lib.zeros(3), lib.zeros(1, 4))),
    "cell dtype": (lambda nn: nn.LSTMCell(3, 4), lambda m, lib: m(lib.zeros(2, 3, dtype=lib.float64))),
    "cell nonlinearity": (lambda nn: nn.RNNCell(3, 4, nonlinearity="sigmoid"), lambda m, lib: m(lib.zeros(2, 3))),
    "nonlinearity": (lambda nn: nn.RNN(3, 4, nonlinearity="sigmoid"), None),
    "dropout above 1": (lambda nn: nn.LSTM(3, 4, 2, dropout=1.5), None),
    "dropout a bool": (lambda nn: nn.GRU(3, 4, 2, dropout=True), None),
    "input_size zero": (lambda nn: nn.RNN(0, 4), None),
    "input_size a float": (lambda nn: nn.LSTM(3.0, 4), None),
    "hidden_size zero": (lambda nn: nn.GRU(3, 0), None),
    "num_layers zero": (lambda nn: nn.LSTM(3, 4, num_layers=0), None),
    "bias not a bool": (lambda nn: nn.LSTM(3, 4, bias=1), None),
    "batch_first not a bool": (lambda nn: nn.GRU(3, 4, batch_first=None), None),
    "proj_size too large": (lambda nn: nn.LSTM(3, 4, proj_size=4), None),
    "proj_size negative": (lambda nn: nn.LSTM(3, 4, proj_size=-1), None),
}


# where minigrad's message does not begin with torch's: a matrix product's or clearer wording of the same refusal
REWORDED = {"input 1-D", "h0 dtype", "cell dtype", "cell unbatched input, batched hx"}


def _raised(lib, nn_module, make, call):
    try:
        layer = make(nn_module)
        if call is not None:
            call(layer, lib)
    except Exception as error:  # noqa: BLE001  (the type is what is compared)
        return type(error), str(error)
    return None, None


@needs_torch
@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_input_raises_torchs_exception_type(name):
    make, call = BAD_CALLS[name]
    expected, torch_message = _raised(torch, torch.nn, make, call)
    actual, message = _raised(minigrad, nn, make, call)
    assert expected is not None
    assert actual is expected, message
    assert not message.startswith("torch.")
    if name not in REWORDED:
        assert message.startswith(torch_message.replace("torch.", "minigrad.")), message
