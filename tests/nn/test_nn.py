"""Tests for minigrad.nn: Module bookkeeping, the layers, nn.functional and nn.init.

Expected values come from closed forms, plain-NumPy loops written here, or
PyTorch's documented strings and behaviour; never from minigrad's own output.
"""
from __future__ import annotations

import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck


def f64(*shape, seed=0, requires_grad=True, low=None):
    """A float64 tensor of normal values (gradcheck needs double precision)."""
    data = np.random.default_rng(seed).standard_normal(shape)
    return minigrad.tensor(data, dtype=minigrad.float64, requires_grad=requires_grad)


def np_log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def naive_conv2d(x, w, b, stride, padding):
    """The definition, one output element at a time."""
    (sh, sw), (ph, pw) = stride, padding
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    xp[:, :, ph:ph + h, pw:pw + wd] = x
    oh, ow = (h + 2 * ph - kh) // sh + 1, (wd + 2 * pw - kw) // sw + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            window = xp[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]  # (n, c, kh, kw)
            y[:, :, i, j] = np.einsum("nckl,ockl->no", window, w)
    return y if b is None else y + b[None, :, None, None]


def naive_max_pool2d(x, kernel, stride, padding):
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    n, c, h, w = x.shape
    xp = np.full((n, c, h + 2 * ph, w + 2 * pw), -np.inf)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = xp[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw].max(axis=(2, 3))
    return y


# =============================================================================
# Parameter
# =============================================================================

def test_parameter_is_a_leaf_that_requires_grad_and_shares_memory():
    t = minigrad.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert isinstance(p, minigrad.Tensor) and p.requires_grad and p.is_leaf
    t._data[0] = 5.0  # same memory, as in PyTorch
    assert p.tolist() == [5.0, 2.0]
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert type(p * 2) is minigrad.Tensor  # operations give plain tensors


def test_parameter_repr_is_pytorchs():
    assert repr(nn.Parameter(minigrad.tensor([1.0, 2.0]))) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert repr(nn.Parameter(minigrad.tensor([0.0]), requires_grad=False)) == "Parameter containing:\ntensor([0.])"


def test_parameter_rejects_non_tensors():
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])


# =============================================================================
# Module: registration and traversal
# =============================================================================

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(minigrad.ones(3))
        self.fc = nn.Linear(3, 2)
        self.not_registered = minigrad.zeros(3)  # a plain tensor attribute
        self.plain_list = [nn.Linear(2, 2)]      # invisible to parameters()
        self.register_buffer("running", minigrad.zeros(2))

    def forward(self, x):
        return self.fc(x * self.scale)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.seq = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1, bias=False))
        self.bias = nn.Parameter(minigrad.zeros(1))

    def forward(self, x):
        return self.seq(self.block(x)) + self.bias


NET_PARAMETER_NAMES = [  # PyTorch's order: each module's own parameters, then its children's, depth first
    "bias", "block.scale", "block.fc.weight", "block.fc.bias", "seq.0.weight", "seq.0.bias", "seq.2.weight",
]


def test_named_parameters_order_and_registration():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    # own parameters first ("bias" was assigned last but is the root's own)
    assert names == NET_PARAMETER_NAMES
    params = list(net.parameters())
    assert all(isinstance(p, nn.Parameter) for p in params)
    assert params[0] is net.bias and params[2] is net.block.fc.weight
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["bias"]
    assert [n for n, _ in net.block.named_parameters(prefix="block")] == ["block.scale", "block.fc.weight", "block.fc.bias"]


def test_named_parameters_order_matches_pytorch():
    torch = pytest.importorskip("torch")
    tnn = torch.nn

    class TBlock(tnn.Module):
        def __init__(self):
            super().__init__()
            self.scale = tnn.Parameter(torch.ones(3))
            self.fc = tnn.Linear(3, 2)
            self.register_buffer("running", torch.zeros(2))

    class TNet(tnn.Module):
        def __init__(self):
            super().__init__()
            self.block = TBlock()
            self.seq = tnn.Sequential(tnn.Linear(2, 4), tnn.ReLU(), tnn.Linear(4, 1, bias=False))
            self.bias = tnn.Parameter(torch.zeros(1))

    tnet, net = TNet(), Net()
    assert [n for n, _ in net.named_parameters()] == [n for n, _ in tnet.named_parameters()]
    assert list(net.state_dict()) == list(tnet.state_dict())
    assert [n for n, _ in net.named_modules()] == [n for n, _ in tnet.named_modules()]


def test_modules_children_and_buffers():
    net = Net()
    assert [n for n, _ in net.named_children()] == ["block", "seq"]
    assert list(net.children()) == [net.block, net.seq]
    assert [n for n, _ in net.named_modules()] == ["", "block", "block.fc", "seq", "seq.0", "seq.1", "seq.2"]
    assert list(net.modules())[0] is net
    assert [n for n, _ in net.named_buffers()] == ["block.running"]
    assert "running" not in dict(net.block.named_parameters())
    assert net.block.running.shape == (2,)


def test_shared_parameter_is_listed_once_but_saved_under_both_names():
    a = nn.Linear(2, 2)
    model = nn.Sequential(a, nn.ReLU(), a)
    assert len(list(model.parameters())) == 2
    assert len(list(model.modules())) == 3  # model, a (once), ReLU
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_setattr_errors_are_pytorchs():
    lin = nn.Linear(2, 3)
    with pytest.raises(TypeError, match=r"cannot assign 'Tensor' as parameter 'weight'"):
        lin.weight = minigrad.zeros(3, 2)
    lin.bias = None  # allowed: a parameter slot may hold None
    assert lin.bias is None and [n for n, _ in lin.named_parameters()] == ["weight"]

    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(minigrad.zeros(1))  # no super().__init__()

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Forgot()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'foo'"):
        lin.foo


def test_register_buffer_rules():
    m = nn.Module()
    m.register_buffer("kept", minigrad.ones(2))
    m.register_buffer("scratch", minigrad.ones(2), persistent=False)
    assert list(m.state_dict()) == ["kept"]
    assert list(m.parameters()) == []
    with pytest.raises(KeyError, match=r'contain "\."'):
        m.register_buffer("a.b", minigrad.ones(1))
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("training", minigrad.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'c'"):
        m.register_buffer("c", 3)


def test_delattr_unregisters():
    lin = nn.Linear(2, 3)
    del lin.bias
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    with pytest.raises(AttributeError):
        lin.bias


def test_deepcopy_and_pickle_give_independent_trainable_models():
    import copy
    import pickle

    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    x = minigrad.randn(4, 2)
    alive = model(x).sum()  # a live graph: the parameters' gradient accumulators exist
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert repr(clone) == repr(model)
        assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in clone.parameters())
        np.testing.assert_array_equal(clone(x).detach().numpy(), model(x).detach().numpy())
        clone(x).sum().backward()
        assert all(p.grad is not None for p in clone.parameters())
        assert all(p.grad is None for p in model.parameters())  # gradients went to the copy only
        with minigrad.no_grad():
            clone[0].weight.fill_(0.0)
        assert model[0].weight.detach().numpy().any()  # values are not shared
    alive.backward()
    assert all(p.grad is not None for p in model.parameters())


def test_linear_without_bias():
    lin = nn.Linear(3, 2, bias=False)
    assert lin.bias is None
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    x = np.arange(6.0).reshape(2, 3).astype(np.float32)
    np.testing.assert_allclose(lin(minigrad.tensor(x)).detach().numpy(), x @ lin.weight.detach().numpy().T, rtol=1e-6)


def test_module_without_forward_raises_pytorchs_error():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
        nn.Module()(minigrad.zeros(1))
    with pytest.raises(NotImplementedError, match=r"Module \[ModuleList\]"):
        nn.ModuleList()(minigrad.zeros(1))


def test_apply_visits_children_first_then_self():
    net = Net()
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Block", "Linear", "ReLU", "Linear", "Sequential", "Net"]


def test_apply_can_reinitialise_weights():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))

    def zero_linear(m):
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.weight)

    model.apply(zero_linear)
    assert all(not m.weight.detach().numpy().any() for m in model if isinstance(m, nn.Linear))


def test_requires_grad_freezes_every_parameter():
    net = Net()
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    net.block.requires_grad_()
    assert [n for n, p in net.named_parameters() if p.requires_grad] == ["block.scale", "block.fc.weight", "block.fc.bias"]


# =============================================================================
# train / eval, zero_grad
# =============================================================================

def test_train_and_eval_propagate_to_every_submodule():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.seq.train(False)
    assert net.training and net.block.training and not any(m.training for m in net.seq.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


def test_zero_grad_sets_to_none_by_default():
    net = Net()
    net(minigrad.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_zero_grad_set_to_none_false_zeroes_in_place():
    lin = nn.Linear(3, 2)
    lin(minigrad.randn(4, 3)).sum().backward()
    grad = lin.weight.grad
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is grad and not grad.numpy().any()
    # gradients accumulate from zero again
    x = minigrad.tensor([[1.0, 2.0, 3.0]])
    lin(x).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.array([[1.0, 2.0, 3.0]] * 2))


# =============================================================================
# state_dict / load_state_dict
# =============================================================================

def test_state_dict_keys_values_and_detachment():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == [  # per module: its parameters, its buffers, then its children
        "bias", "block.scale", "block.running", "block.fc.weight", "block.fc.bias",
        "seq.0.weight", "seq.0.bias", "seq.2.weight",
    ]
    assert not any(v.requires_grad for v in sd.values())
    assert all(type(v) is minigrad.Tensor for v in sd.values())
    np.testing.assert_array_equal(sd["block.fc.weight"].numpy(), net.block.fc.weight.detach().numpy())


def test_state_dict_round_trip_reproduces_the_model():
    minigrad.manual_seed(1)
    a = Net()
    minigrad.manual_seed(2)
    b = Net()
    x = minigrad.randn(4, 3)
    assert not np.allclose(a(x).detach().numpy(), b(x).detach().numpy())
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    # values were copied, not shared: changing a does not change b
    with minigrad.no_grad():
        a.block.fc.weight.fill_(0.0)
    assert np.abs(b.block.fc.weight.detach().numpy()).sum() > 0
    # b's parameters are still the same leaf objects, still trainable
    assert all(isinstance(p, nn.Parameter) and p.requires_grad and p.is_leaf for p in b.parameters())


def test_load_state_dict_reports_missing_unexpected_and_size_mismatch():
    model = nn.Sequential(nn.Linear(2, 3))
    bad = {"0.weight": minigrad.zeros(4, 2), "foo": minigrad.zeros(1)}
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(bad)
    assert str(info.value) == (
        "Error(s) in loading state_dict for Sequential:\n"
        '\tMissing key(s) in state_dict: "0.bias". \n'
        '\tUnexpected key(s) in state_dict: "foo". \n'
        "\tsize mismatch for 0.weight: copying a param with shape minigrad.Size([4, 2]) from checkpoint, "
        "the shape in current model is minigrad.Size([3, 2])."
    )
    # a size mismatch is an error even when not strict
    with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
        model.load_state_dict(bad, strict=False)
    # nothing was half-loaded
    assert model[0].weight.shape == (3, 2)


def test_load_state_dict_non_strict_returns_the_keys():
    model = nn.Sequential(nn.Linear(2, 3))
    w = minigrad.ones(3, 2)
    result = model.load_state_dict({"0.weight": w, "extra": minigrad.zeros(1)}, strict=False)
    assert result.missing_keys == ["0.bias"] and result.unexpected_keys == ["extra"]
    np.testing.assert_array_equal(model[0].weight.detach().numpy(), np.ones((3, 2)))


def test_load_state_dict_message_names_the_class_and_all_missing_keys():
    with pytest.raises(RuntimeError) as info:
        nn.Sequential(nn.Linear(2, 3)).load_state_dict({})
    assert str(info.value) == (
        'Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: "0.weight", "0.bias". '
    )


# =============================================================================
# repr
# =============================================================================

def test_sequential_repr_is_pytorchs():
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=64, out_features=128, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Linear(in_features=128, out_features=10, bias=True)\n"
        ")"
    )


def test_layer_reprs():
    assert repr(nn.Linear(3, 2, bias=False)) == "Linear(in_features=3, out_features=2, bias=False)"
    assert repr(nn.Conv2d(1, 8, 3)) == "Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1))"
    assert repr(nn.Conv2d(1, 8, 3, stride=2, padding=1, bias=False)) == (
        "Conv2d(1, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)"
    )
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.Dropout(0.25)) == "Dropout(p=0.25, inplace=False)"  # PyTorch's repr
    assert [repr(m) for m in (nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.CrossEntropyLoss(), nn.MSELoss())] == [
        "ReLU()", "Tanh()", "Sigmoid()", "CrossEntropyLoss()", "MSELoss()",
    ]
    assert repr(nn.Sequential()) == "Sequential()"


def test_nested_repr_indents_like_pytorch():
    model = nn.Sequential(nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU()), nn.Flatten())
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Sequential(\n"
        "    (0): Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1))\n"
        "    (1): ReLU()\n"
        "  )\n"
        "  (1): Flatten(start_dim=1, end_dim=-1)\n"
        ")"
    )


def test_custom_module_repr_with_extra_repr_and_children():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.ReLU()

        def extra_repr(self):
            return "factor=2"

    assert repr(Scaled()) == "Scaled(\n  factor=2\n  (inner): ReLU()\n)"


def test_modulelist_repr_groups_repeats_like_pytorch():
    ml = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Linear(2, 3), nn.ReLU()])
    assert repr(ml) == (
        "ModuleList(\n"
        "  (0-1): 2 x ReLU()\n"
        "  (2): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (3): ReLU()\n"
        ")"
    )
    assert repr(nn.ModuleList()) == "ModuleList()"


# =============================================================================
# Containers
# =============================================================================

def test_sequential_indexing_len_iteration_append():
    a, r, b = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    model = nn.Sequential(a, r)
    assert len(model) == 2 and model[0] is a and model[-1] is r
    assert list(model) == [a, r]
    assert model.append(b) is model
    assert len(model) == 3 and model[2] is b
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    tail = model[1:]
    assert isinstance(tail, nn.Sequential) and list(tail) == [r, b]
    assert list(tail.state_dict()) == ["2.weight", "2.bias"]  # slices keep names, as in PyTorch
    with pytest.raises(IndexError, match="index 5 is out of range"):
        model[5]
    c = nn.Linear(2, 3)
    model[0] = c
    assert model[0] is c and [n for n, _ in model.named_children()] == ["0", "1", "2"]


def test_sequential_forward_chains_and_accepts_ordereddict():
    model = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert [n for n, _ in model.named_children()] == ["fc", "act"]
    assert model.fc is model[0]
    x = minigrad.randn(3, 2)
    np.testing.assert_allclose(model(x).detach().numpy(), model.act(model.fc(x)).detach().numpy())


def test_modulelist_registers_its_layers():
    class Tower(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(2, 2) for _ in range(3))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).relu()
            return x

    t = Tower()
    assert len(list(t.parameters())) == 6
    assert [n for n, _ in t.named_parameters()][:2] == ["layers.0.weight", "layers.0.bias"]
    t.layers.append(nn.Linear(2, 2))
    t.layers.extend([nn.Linear(2, 2)])
    assert len(t.layers) == 5 and len(list(t.parameters())) == 10
    assert t(minigrad.randn(4, 2)).shape == (4, 2)
    with pytest.raises(IndexError, match="index 0 is out of range"):
        nn.ModuleList()[0]


# =============================================================================
# Layers: forward values
# =============================================================================

def test_linear_forward_matches_numpy_and_weight_layout():
    lin = nn.Linear(4, 3)
    assert lin.weight.shape == (3, 4) and lin.bias.shape == (3,)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    expected = x @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
    np.testing.assert_allclose(lin(minigrad.tensor(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    # any number of leading dimensions
    x3 = minigrad.randn(2, 5, 4)
    assert lin(x3).shape == (2, 5, 3)


def test_conv2d_module_shapes_and_parameters():
    conv = nn.Conv2d(3, 8, kernel_size=(3, 2), stride=2, padding=1)
    assert conv.weight.shape == (8, 3, 3, 2) and conv.bias.shape == (8,)
    y = conv(minigrad.randn(2, 3, 9, 7))
    assert y.shape == (2, 8, (9 + 2 - 3) // 2 + 1, (7 + 2 - 2) // 2 + 1)


def test_flatten_module_and_function():
    x = minigrad.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    assert F.flatten(x).shape == (120,)
    assert F.flatten(x, 2).shape == (2, 3, 20)


def test_activation_modules_match_numpy():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    t = minigrad.tensor(x)
    np.testing.assert_allclose(nn.ReLU()(t).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(nn.Tanh()(t).numpy(), np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(nn.Sigmoid()(t).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-6)


# =============================================================================
# Initialisation
# =============================================================================

@pytest.mark.parametrize("fan_in, fan_out", [(64, 128), (500, 20)])
def test_linear_init_is_uniform_within_pytorchs_bound(fan_in, fan_out):
    minigrad.manual_seed(0)
    lin = nn.Linear(fan_in, fan_out)
    bound = 1 / math.sqrt(fan_in)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # uniform on [-bound, bound]: it reaches near both ends, mean 0, std bound / sqrt(3)
    assert w.max() > 0.98 * bound and w.min() < -0.98 * bound
    n = w.size
    assert abs(w.mean()) < 4 * bound / math.sqrt(3 * n)
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert w.dtype == np.float32


def test_conv2d_init_uses_fan_in_of_the_receptive_field():
    minigrad.manual_seed(0)
    conv = nn.Conv2d(4, 16, 3)
    bound = 1 / math.sqrt(4 * 3 * 3)
    w = conv.weight.detach().numpy()
    assert np.abs(w).max() <= bound and w.max() > 0.95 * bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound


def test_init_is_reproducible_with_manual_seed():
    minigrad.manual_seed(123)
    a = nn.Linear(5, 5)
    minigrad.manual_seed(123)
    b = nn.Linear(5, 5)
    c = nn.Linear(5, 5)
    np.testing.assert_array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    assert not np.array_equal(b.weight.detach().numpy(), c.weight.detach().numpy())


def test_init_functions_work_in_place_and_are_not_recorded():
    w = nn.Parameter(minigrad.zeros(200, 300))
    version = w._version
    out = nn.init.xavier_uniform_(w)
    assert out is w and w.grad_fn is None and w.requires_grad and w._version > version
    bound = math.sqrt(6 / (200 + 300))
    a = w.detach().numpy()
    assert np.abs(a).max() <= bound and a.max() > 0.99 * bound

    nn.init.kaiming_uniform_(w)  # a=0, leaky_relu gain sqrt(2): bound sqrt(6 / fan_in)
    bound = math.sqrt(6 / 300)
    assert np.abs(w.detach().numpy()).max() <= bound and w.detach().numpy().max() > 0.99 * bound

    nn.init.normal_(w, mean=1.0, std=0.5)
    assert abs(w.detach().numpy().mean() - 1.0) < 0.01 and abs(w.detach().numpy().std() - 0.5) < 0.01
    nn.init.uniform_(w, -2.0, -1.0)
    assert w.detach().numpy().min() >= -2.0 and w.detach().numpy().max() < -1.0
    nn.init.ones_(w)
    assert (w.detach().numpy() == 1).all()
    nn.init.zeros_(w)
    assert (w.detach().numpy() == 0).all()


def test_calculate_gain_and_fan_errors():
    assert nn.init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert nn.init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.kaiming_uniform_(minigrad.zeros(3))


# =============================================================================
# nn.functional: forward values against NumPy
# =============================================================================

def test_softmax_and_log_softmax_match_numpy():
    x = np.random.default_rng(1).standard_normal((3, 5))
    t = minigrad.tensor(x)
    for dim in (0, 1, -1):
        expected = np.exp(np_log_softmax(x, dim))
        np.testing.assert_allclose(F.softmax(t, dim).numpy(), expected, rtol=1e-12)
        np.testing.assert_allclose(F.log_softmax(t, dim).numpy(), np_log_softmax(x, dim), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_matches_the_formula(reduction):
    x = np.random.default_rng(2).standard_normal((6, 4)) * 3
    target = np.array([0, 3, 1, 1, 2, 3])
    losses = -np_log_softmax(x, 1)[np.arange(6), target]
    expected = {"mean": losses.mean(), "sum": losses.sum(), "none": losses}[reduction]
    out = F.cross_entropy(minigrad.tensor(x), minigrad.tensor(target), reduction=reduction)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    module = nn.CrossEntropyLoss(reduction=reduction)
    np.testing.assert_allclose(module(minigrad.tensor(x), minigrad.tensor(target)).numpy(), expected, rtol=1e-12)


def test_cross_entropy_is_stable_for_huge_logits_and_float32():
    x = minigrad.tensor([[1000.0, 0.0], [0.0, -1000.0]])
    loss = F.cross_entropy(x, minigrad.tensor([1, 1]), reduction="none")
    assert loss.dtype == minigrad.float32
    np.testing.assert_allclose(loss.numpy(), [1000.0, 1000.0], rtol=1e-6)


def test_cross_entropy_uniform_scores_give_log_c():
    loss = F.cross_entropy(minigrad.zeros(4, 10, requires_grad=True), minigrad.tensor([0, 1, 2, 9]))
    assert loss.item() == pytest.approx(math.log(10), rel=1e-6)
    assert loss.grad_fn.name() == "NllLossBackward0"


def test_cross_entropy_with_class_probabilities():
    x = np.random.default_rng(3).standard_normal((4, 3))
    p = np.random.default_rng(4).random((4, 3))
    p /= p.sum(1, keepdims=True)
    expected = -(p * np_log_softmax(x, 1)).sum(1).mean()
    out = F.cross_entropy(minigrad.tensor(x), minigrad.tensor(p))
    assert out.item() == pytest.approx(expected, rel=1e-12)


def test_nll_loss_picks_minus_the_target_log_probability():
    logp = np.log(np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]]))
    t = np.array([1, 0, 0])
    out = F.nll_loss(minigrad.tensor(logp), minigrad.tensor(t))
    assert out.item() == pytest.approx(-(np.log(0.8) + np.log(0.6) + np.log(0.5)) / 3, rel=1e-12)
    assert F.nll_loss(minigrad.tensor(logp), minigrad.tensor(t), reduction="sum").item() == pytest.approx(
        -(np.log(0.8) + np.log(0.6) + np.log(0.5)), rel=1e-12
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_numpy(reduction):
    a = np.random.default_rng(5).standard_normal((4, 3))
    b = np.random.default_rng(6).standard_normal((4, 3))
    sq = (a - b) ** 2
    expected = {"mean": sq.mean(), "sum": sq.sum(), "none": sq}[reduction]
    np.testing.assert_allclose(F.mse_loss(minigrad.tensor(a), minigrad.tensor(b), reduction=reduction).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(nn.MSELoss(reduction=reduction)(minigrad.tensor(a), minigrad.tensor(b)).numpy(), expected, rtol=1e-12)


def test_mse_loss_warns_like_pytorch_on_shape_mismatch_then_broadcasts():
    a = np.arange(3.0).reshape(3, 1)
    b = np.array([1.0, 2.0, 4.0])
    with pytest.warns(UserWarning) as record:
        out = F.mse_loss(minigrad.tensor(a), minigrad.tensor(b))
    assert str(record[0].message) == (
        "Using a target size (minigrad.Size([3])) that is different to the input size (minigrad.Size([3, 1])). "
        "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size."
    )
    assert out.item() == pytest.approx(((a - b) ** 2).mean())  # broadcast to (3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(minigrad.tensor(b), minigrad.tensor(b))  # same shape: no warning


def test_linear_function_matches_numpy():
    x, w, b = (np.random.default_rng(s).standard_normal(shape) for s, shape in [(0, (5, 3)), (1, (4, 3)), (2, (4,))])
    np.testing.assert_allclose(F.linear(minigrad.tensor(x), minigrad.tensor(w), minigrad.tensor(b)).numpy(), x @ w.T + b)
    np.testing.assert_allclose(F.linear(minigrad.tensor(x), minigrad.tensor(w)).numpy(), x @ w.T)


CONV_CASES = [  # (input shape, weight shape, stride, padding)
    ((2, 3, 7, 6), (4, 3, 3, 3), 1, 0),
    ((2, 3, 7, 6), (4, 3, 3, 3), 2, 1),
    ((1, 2, 8, 5), (3, 2, 3, 2), (2, 1), (1, 0)),
    ((3, 1, 5, 5), (2, 1, 5, 5), 1, 2),
    ((1, 2, 4, 4), (2, 2, 1, 1), 3, 0),
]


def _pair(v):
    return (v, v) if isinstance(v, int) else v


@pytest.mark.parametrize("x_shape, w_shape, stride, padding", CONV_CASES)
def test_conv2d_matches_the_definition(x_shape, w_shape, stride, padding):
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(w_shape[0])
    out = F.conv2d(minigrad.tensor(x), minigrad.tensor(w), minigrad.tensor(b), stride, padding)
    np.testing.assert_allclose(out.numpy(), naive_conv2d(x, w, b, _pair(stride), _pair(padding)), rtol=1e-10, atol=1e-12)
    out = F.conv2d(minigrad.tensor(x), minigrad.tensor(w), None, stride, padding)
    np.testing.assert_allclose(out.numpy(), naive_conv2d(x, w, None, _pair(stride), _pair(padding)), rtol=1e-10, atol=1e-12)


POOL_CASES = [  # (input shape, kernel, stride, padding)
    ((2, 3, 6, 6), 2, None, 0),
    ((2, 3, 7, 5), 3, 2, 1),
    ((1, 2, 5, 6), (2, 3), 1, (1, 1)),
    ((1, 1, 4, 4), 2, 1, 0),
]


@pytest.mark.parametrize("x_shape, kernel, stride, padding", POOL_CASES)
def test_max_pool2d_matches_the_definition(x_shape, kernel, stride, padding):
    x = np.random.default_rng(8).standard_normal(x_shape)
    out = F.max_pool2d(minigrad.tensor(x), kernel, stride, padding)
    k = _pair(kernel)
    expected = naive_max_pool2d(x, k, k if stride is None else _pair(stride), _pair(padding))
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(nn.MaxPool2d(kernel, stride, padding)(minigrad.tensor(x)).numpy(), expected)


def test_conv2d_and_pool_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x, w, b = rng.standard_normal((2, 3, 9, 8)), rng.standard_normal((5, 3, 3, 2)), rng.standard_normal(5)
    ours = F.conv2d(minigrad.tensor(x), minigrad.tensor(w), minigrad.tensor(b), (2, 1), 1).numpy()
    theirs = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), (2, 1), 1).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    ours = F.max_pool2d(minigrad.tensor(x), 3, 2, 1).numpy()
    theirs = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1).numpy()
    np.testing.assert_array_equal(ours, theirs)


# =============================================================================
# nn.functional: gradients (float64, finite differences)
# =============================================================================

@pytest.mark.parametrize("fn", [F.relu, F.sigmoid, F.tanh, lambda x: F.flatten(x, 0, 1)], ids=["relu", "sigmoid", "tanh", "flatten"])
def test_gradcheck_elementwise(fn):
    x = f64(3, 4)
    assert gradcheck(fn, (x,))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gradcheck_softmax_family(dim):
    x = f64(3, 4, seed=1)
    assert gradcheck(lambda x: F.softmax(x, dim), (x,))
    assert gradcheck(lambda x: F.log_softmax(x, dim), (x,))


def test_gradcheck_linear():
    x, w, b = f64(5, 3, seed=1), f64(4, 3, seed=2), f64(4, seed=3)
    assert gradcheck(F.linear, (x, w, b))
    assert gradcheck(lambda x, w: F.linear(x, w), (x, w))
    assert gradcheck(F.linear, (f64(2, 5, 3, seed=4), w, b))


def test_gradgradcheck_linear_fused_and_generic():
    """The fused node's create_graph backward is built from tensor ops, so it differentiates again."""
    x, w, b = f64(5, 3, seed=1), f64(4, 3, seed=2), f64(4, seed=3)
    assert gradgradcheck(F.linear, (x, w, b))
    assert gradgradcheck(lambda x, w: F.linear(x, w), (x, w))
    assert gradgradcheck(F.linear, (f64(2, 5, 3, seed=4), w, b))


def test_linear_node_names_match_pytorch():
    torch = pytest.importorskip("torch")
    x, w, b = np.ones((2, 3), np.float32), np.ones((4, 3), np.float32), np.ones(4, np.float32)
    for args in ((x, w, b), (x, w)):
        mine = F.linear(*(minigrad.tensor(a, requires_grad=True) for a in args)).grad_fn.name()
        theirs = torch.nn.functional.linear(*(torch.tensor(a, requires_grad=True) for a in args)).grad_fn.name()
        assert mine == theirs


def test_linear_only_fuses_what_it_can_and_keeps_pytorchs_errors():
    w = minigrad.zeros(4, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x5 and 3x4\)"):
        F.linear(minigrad.zeros(2, 5), w)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        F.linear(minigrad.zeros(2, 3, dtype=minigrad.float64), w)
    with pytest.raises(RuntimeError, match="must have the same dtype"):
        F.linear(minigrad.zeros(2, 3), w, minigrad.zeros(4, dtype=minigrad.float64))
    batched = F.linear(minigrad.zeros(5, 2, 3), w, minigrad.zeros(4))  # not 2-D: its rows as a matrix, viewed back
    assert batched.shape == (5, 2, 4) and batched.grad_fn.name() == "ViewBackward0"  # (PyTorch's addmm + view)


@pytest.mark.parametrize("x_shape, w_shape, stride, padding", CONV_CASES)
def test_gradcheck_conv2d(x_shape, w_shape, stride, padding):
    x, w, b = f64(*x_shape, seed=1), f64(*w_shape, seed=2), f64(w_shape[0], seed=3)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride, padding), (x, w, b))
    assert gradcheck(lambda x, w: F.conv2d(x, w, None, stride, padding), (x, w))


@pytest.mark.parametrize("x_shape, kernel, stride, padding", POOL_CASES)
def test_gradcheck_max_pool2d(x_shape, kernel, stride, padding):
    x = f64(*x_shape, seed=4)  # continuous random values: no ties, so the max is differentiable
    assert gradcheck(lambda x: F.max_pool2d(x, kernel, stride, padding), (x,))


def test_max_pool2d_overlapping_windows_accumulate_the_gradient():
    # 3x3 input whose centre is the max of all four 2x2 windows (stride 1)
    x = minigrad.tensor([[[[0.0, 0.0, 0.0], [0.0, 9.0, 0.0], [0.0, 0.0, 0.0]]]], requires_grad=True)
    F.max_pool2d(x, 2, 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], [[0, 0, 0], [0, 4, 0], [0, 0, 0]])


@pytest.mark.parametrize("fn", [lambda x: F.conv2d(x, f64(1, 1, 2, 2, seed=1)), lambda x: F.max_pool2d(x, 2)],
                         ids=["conv2d", "max_pool2d"])
def test_conv_and_pool_are_differentiable_twice(fn):
    """They were once_differentiable (a second backward raised); PyTorch differentiates them twice."""
    x = f64(1, 1, 4, 4)
    assert gradgradcheck(lambda x: fn(x) ** 2, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradcheck_cross_entropy_wrt_logits(reduction):
    x = f64(5, 4, seed=5)
    t = minigrad.tensor([0, 3, 1, 1, 2])
    assert gradcheck(lambda x: F.cross_entropy(x, t, reduction=reduction), (x,))


def test_cross_entropy_gradient_is_softmax_minus_onehot_over_n():
    x = np.random.default_rng(6).standard_normal((4, 3))
    t = np.array([2, 0, 1, 2])
    xt = minigrad.tensor(x, requires_grad=True)
    F.cross_entropy(xt, minigrad.tensor(t)).backward()
    expected = np.exp(np_log_softmax(x, 1))
    expected[np.arange(4), t] -= 1
    np.testing.assert_allclose(xt.grad.numpy(), expected / 4, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradgradcheck_cross_entropy(reduction):
    x = f64(4, 3, seed=7)
    t = minigrad.tensor([2, 0, 1, 2])
    assert gradgradcheck(lambda x: F.cross_entropy(x, t, reduction=reduction), (x,))


def test_cross_entropy_hessian_matches_closed_form():
    # For one row, d2L/dx2 = diag(p) - p p^T with p = softmax(x).
    x = np.array([[0.3, -1.2, 2.0]])
    xt = minigrad.tensor(x, requires_grad=True)
    (g,) = minigrad.autograd.grad(F.cross_entropy(xt, minigrad.tensor([1])), (xt,), create_graph=True)
    p = np.exp(np_log_softmax(x, 1))[0]
    hessian = np.diag(p) - np.outer(p, p)
    for i in range(3):
        (row,) = minigrad.autograd.grad(g[0, i], (xt,), retain_graph=True)
        np.testing.assert_allclose(row.numpy()[0], hessian[i], rtol=1e-10, atol=1e-14)


def test_gradcheck_cross_entropy_with_probabilities_wrt_both():
    x = f64(3, 4, seed=8)
    p = minigrad.tensor(np.random.default_rng(9).random((3, 4)), requires_grad=True)
    assert gradcheck(lambda x, p: F.cross_entropy(x, p), (x, p))
    assert gradgradcheck(lambda x, p: F.cross_entropy(x, p), (x, p))


def test_gradcheck_nll_loss_and_double_backward():
    x = f64(4, 3, seed=10)
    t = minigrad.tensor([2, 0, 1, 1])
    for reduction in ("mean", "sum", "none"):
        assert gradcheck(lambda x: F.nll_loss(F.log_softmax(x, 1), t, reduction=reduction), (x,))
    assert gradgradcheck(lambda x: F.nll_loss(F.log_softmax(x, 1), t), (x,))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradcheck_mse_loss(reduction):
    a, b = f64(3, 4, seed=11), f64(3, 4, seed=12)
    assert gradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), (a, b))
    assert gradgradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), (a, b))


def test_gradcheck_dropout_with_a_fixed_mask():
    x = f64(6, 5, seed=13)

    def fn(x):
        minigrad.manual_seed(0)  # the same mask at every evaluation
        return F.dropout(x, 0.4)

    assert gradcheck(fn, (x,))


# =============================================================================
# Dropout
# =============================================================================

def test_dropout_eval_is_the_identity():
    x = minigrad.randn(10, 10)
    layer = nn.Dropout(0.5).eval()
    assert layer(x) is x
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x


def test_dropout_train_zeroes_about_p_and_scales_the_rest():
    minigrad.manual_seed(0)
    p, n = 0.3, 200_000
    x = minigrad.ones(n)
    y = nn.Dropout(p)(x).numpy()
    zeroed = (y == 0).mean()
    assert abs(zeroed - p) < 4 * math.sqrt(p * (1 - p) / n)  # within 4 standard deviations
    np.testing.assert_allclose(y[y != 0], 1 / (1 - p), rtol=1e-6)  # inverted dropout
    assert abs(y.mean() - 1.0) < 0.01  # the expected value is kept


def test_dropout_gradient_is_the_mask():
    minigrad.manual_seed(1)
    x = minigrad.randn(50, requires_grad=True)
    y = F.dropout(x, 0.5)
    y.sum().backward()
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 2.0, 0.0))


def test_dropout_extremes_and_reproducibility():
    x = minigrad.randn(100)
    assert not F.dropout(x, 1.0).numpy().any()
    minigrad.manual_seed(5)
    a = F.dropout(x, 0.5).numpy()
    minigrad.manual_seed(5)
    b = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(a, b)


def test_dropout_probability_errors():
    with pytest.raises(ValueError, match=r"^dropout probability has to be between 0 and 1, but got 1.5$"):
        F.dropout(minigrad.ones(3), 1.5)
    with pytest.raises(ValueError, match=r"^dropout probability has to be between 0 and 1, but got -0.1$"):
        nn.Dropout(-0.1)


# =============================================================================
# Errors
# =============================================================================

def test_cross_entropy_target_out_of_bounds():
    x = minigrad.randn(3, 10)
    with pytest.raises(IndexError, match=r"^Target 12 is out of bounds\.$"):
        F.cross_entropy(x, minigrad.tensor([1, 12, 0]))
    with pytest.raises(IndexError, match=r"^Target -1 is out of bounds\.$"):
        F.cross_entropy(x, minigrad.tensor([1, -1, 0]))
    with pytest.raises(IndexError, match="Target 10 is out of bounds"):
        F.nll_loss(x, minigrad.tensor([10, 0, 0]))


def test_cross_entropy_float_target_of_wrong_shape_names_the_shapes():
    with pytest.raises(RuntimeError) as info:
        F.cross_entropy(minigrad.randn(3, 5), minigrad.randn(3, 4))
    assert "[3, 4]" in str(info.value) and "[3, 5]" in str(info.value)
    with pytest.raises(RuntimeError) as info:
        F.cross_entropy(minigrad.randn(3, 5), minigrad.tensor([1.0, 2.0, 0.0]))
    assert "[3]" in str(info.value) and "[3, 5]" in str(info.value)


def test_cross_entropy_of_other_ranks_is_nll_of_log_softmax_over_dim_1():
    """(C,) with a 0-d target and (N, C, d) with (N, d) targets, as PyTorch accepts them."""
    x = minigrad.randn(2, 3, 4, dtype=minigrad.float64)
    t = minigrad.tensor([[0, 1, 2, 1], [2, 2, 0, 1]])
    logp = np_log_softmax(x.numpy(), 1)
    picked = -np.take_along_axis(logp, t.numpy()[:, None, :], 1)[:, 0, :]
    np.testing.assert_allclose(F.cross_entropy(x, t).item(), picked.mean(), rtol=1e-12)
    one = minigrad.randn(5, dtype=minigrad.float64)
    np.testing.assert_allclose(F.cross_entropy(one, minigrad.tensor(3)).item(), -np_log_softmax(one.numpy(), 0)[3],
                               rtol=1e-12)
    with pytest.raises(RuntimeError, match="0-D class index"):
        F.cross_entropy(minigrad.randn(5), minigrad.tensor([0, 1, 2, 3, 4]))


def test_cross_entropy_other_target_errors():
    x = minigrad.randn(3, 5)
    with pytest.raises(ValueError, match=r"^Expected input batch_size \(3\) to match target batch_size \(2\)\.$"):
        F.cross_entropy(x, minigrad.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        F.cross_entropy(x, minigrad.tensor([[0], [1], [2]]))
    with pytest.raises(RuntimeError, match="Long"):
        F.cross_entropy(x, minigrad.tensor([0, 1, 2], dtype=minigrad.int32))
    with pytest.raises(ValueError, match="^foo is not a valid value for reduction$"):
        F.cross_entropy(x, minigrad.tensor([0, 1, 2]), reduction="foo")
    with pytest.raises(ValueError, match="^foo is not a valid value for reduction$"):
        nn.MSELoss(reduction="foo")


def test_losses_reject_numpy_targets_with_a_typeerror():
    with pytest.raises(TypeError, match=r"cross_entropy\(\): argument 'target' \(position 2\) must be Tensor, not numpy.ndarray"):
        F.cross_entropy(minigrad.randn(2, 3), np.array([0, 1]))
    with pytest.raises(TypeError, match=r"mse_loss\(\): argument 'target' \(position 2\) must be Tensor"):
        F.mse_loss(minigrad.randn(2), np.zeros(2))


def test_cross_entropy_of_an_empty_batch_is_nan_like_pytorch():
    x = minigrad.zeros(0, 3, requires_grad=True)
    t = minigrad.tensor(np.zeros(0, dtype=np.int64))
    assert math.isnan(F.cross_entropy(x, t).item())
    assert F.cross_entropy(x, t, reduction="sum").item() == 0.0


def test_conv2d_errors_are_pytorchs():
    with pytest.raises(RuntimeError) as info:
        F.conv2d(minigrad.randn(2, 3, 8, 8), minigrad.randn(8, 1, 3, 3))
    assert str(info.value) == (
        "Given groups=1, weight of size [8, 1, 3, 3], expected input[2, 3, 8, 8] to have 1 channels, "
        "but got 3 channels instead"
    )
    with pytest.raises(RuntimeError) as info:
        nn.Conv2d(1, 8, 3)(minigrad.randn(2, 1, 2, 2))
    assert str(info.value) == (
        "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). "
        "Kernel size can't be greater than actual input size"
    )
    with pytest.raises(RuntimeError, match="should be the same"):
        F.conv2d(minigrad.randn(1, 1, 4, 4, dtype=minigrad.float64), minigrad.randn(1, 1, 2, 2))
    with pytest.raises(RuntimeError, match=r"4D.*\[8, 8\]"):
        F.conv2d(minigrad.randn(8, 8), minigrad.randn(1, 1, 2, 2))


def test_max_pool2d_padding_error_is_pytorchs():
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(minigrad.randn(1, 1, 4, 4), 2, padding=2)


def test_cross_entropy_backward_from_log_probabilities_a_hook_unpacked_in_another_layout():
    """The fused backward scatters into a flat view of its result: a saved-tensor hook that unpacks the
    log-probabilities in Fortran order must still give torch's gradient (a copy would lose the scatter)."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    t = [0, 3, 1, 1, 2]
    z = minigrad.tensor(x, requires_grad=True)
    with minigrad.autograd.graph.saved_tensors_hooks(
            lambda a: a, lambda a: minigrad.tensor(np.asfortranarray(a.detach().numpy()))):
        loss = F.cross_entropy(z, minigrad.tensor(t))
    loss.backward()
    zt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.cross_entropy(zt, torch.tensor(t)).backward()
    np.testing.assert_allclose(z.grad.numpy(), zt.grad.numpy(), rtol=1e-5, atol=1e-7)
