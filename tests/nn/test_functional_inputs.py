"""Arguments that are not tensors, in ``minigrad.nn.functional`` and in the functions that combine
tensors (``minigrad.cat``, ``stack``, ``where``, ``maximum``, ``pow``, ``broadcast_*``), as in PyTorch.

Every public function of both modules is called with each of its tensor arguments in turn replaced
by a float, an int, a list and a NumPy array: minigrad must refuse what torch refuses, with its
exception type (TypeError, where minigrad used to fail with an AttributeError from deep inside), and
accept what torch accepts (a number in ``where`` and ``pow``), with torch's values; and the message
is torch's, plus the fix where the argument holds data.
"""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import minigrad
import minigrad.nn.functional as F
from minigrad import functional_ops

torch = pytest.importorskip("torch")


# The public functions of minigrad.nn.functional, and those minigrad exports from functional_ops.
FUNCTIONAL = {name for name, fn in vars(F).items()
              if inspect.isfunction(fn) and fn.__module__ == F.__name__ and not name.startswith("_")}
COMBINING = {name for name, fn in vars(minigrad).items()
             if inspect.isfunction(fn) and fn.__module__ == functional_ops.__name__ and not name.startswith("_")}


def _named(lib) -> dict:
    """Fresh arguments for one call (the in-place functions overwrite theirs), the same in both libraries."""
    rng = np.random.default_rng(0)
    t = lambda *shape: lib.tensor(rng.uniform(0.1, 0.9, shape))  # noqa: E731  (in [0, 1]: bce's domain)
    return {
        "up_kernel": t(2, 3, 2, 2), "up_kernel1d": t(2, 3, 2), "blocks": t(1, 8, 9),
        "x": t(2, 3), "y": t(2, 3), "row": t(3), "weight": t(4, 3), "bias": t(4), "image": t(1, 2, 4, 4),
        "kernel": t(3, 2, 2, 2), "channels": t(3), "labels": lib.tensor([0, 2]), "table": t(5, 3),
        "mask": lib.tensor([[True, False, True], [False, True, False]]), "shape": (2, 3), "other_shape": (3,),
        "sequence": t(1, 2, 5), "kernel1d": t(3, 2, 2), "pair": t(2),
        "tokens": t(3, 1, 4), "in_proj": t(12, 4), "in_bias": t(12), "out_proj": t(4, 4), "bilinear_weight": t(4, 3, 3),
        "label_lists": lib.tensor([[0, 2, -1], [1, -1, 0]]),
        "volume": t(1, 2, 3, 4, 4), "kernel3d": t(3, 2, 2, 2, 2), "up_kernel3d": t(2, 3, 2, 2, 2), "theta": t(1, 2, 3),
        "grid": t(1, 2, 2, 2), "ctc_targets": lib.tensor([[1, 2]]),
        **{f"indices{n}d": lib.zeros(shape, dtype=lib.int64) for n, shape in
           ((1, (1, 2, 5)), (2, (1, 2, 4, 4)), (3, (1, 2, 3, 4, 4)))},
    }


# Each public function with arguments it accepts. A string names a value of _named (a tensor, or
# broadcast_shapes' shapes): those are the arguments replaced, a list's items one at a time.
CALLS = {
    "conv_transpose1d": ("sequence", "up_kernel1d", "channels"), "conv_transpose2d": ("image", "up_kernel", "channels"),
    "unfold": ("image", 2), "fold": ("blocks", (4, 4), 2), "pixel_shuffle": ("image", 1),
    "pixel_unshuffle": ("image", 2), "channel_shuffle": ("image", 2), "dropout1d": ("sequence", 0.0),
    "dropout2d": ("image", 0.0),
    "relu": ("x",), "relu_": ("x",), "sigmoid": ("x",), "tanh": ("x",), "softmax": ("x", 1),
    "log_softmax": ("x", 1), "gelu": ("x",), "silu": ("x",), "leaky_relu": ("x",), "leaky_relu_": ("x",),
    "elu": ("x",), "elu_": ("x",), "softplus": ("x",), "dropout": ("x", 0.0), "flatten": ("image",),
    "linear": ("x", "weight", "bias"), "conv2d": ("image", "kernel", "channels"), "max_pool2d": ("image", 2),
    "avg_pool2d": ("image", 2), "adaptive_avg_pool2d": ("image", 2), "pad": ("x", (1, 1)),
    "one_hot": ("labels",), "embedding": ("labels", "table"), "layer_norm": ("x", (3,), "row", "row"),
    "batch_norm": ("x", "row", "row", "row", "row"), "cross_entropy": ("x", "labels", "row"),
    "nll_loss": ("x", "labels", "row"), "mse_loss": ("x", "y", {"weight": "y"}),
    "l1_loss": ("x", "y", {"weight": "y"}), "smooth_l1_loss": ("x", "y"), "huber_loss": ("x", "y", {"weight": "y"}),
    "binary_cross_entropy": ("x", "y", "row"),
    "binary_cross_entropy_with_logits": ("x", "y", "row", {"pos_weight": "row"}),
    "cat": (["x", "y"],), "stack": (["x", "y"],), "broadcast_tensors": ("x", "row"),
    "broadcast_shapes": ("shape", "other_shape"), "where": ("mask", "x", "y"), "maximum": ("x", "y"),
    "pow": ("x", "y"),
    "hardtanh": ("x",), "hardtanh_": ("x",), "relu6": ("x",), "selu": ("x",), "selu_": ("x",), "celu": ("x",),
    "celu_": ("x",), "mish": ("x",), "softsign": ("x",), "softmin": ("x", 1), "logsigmoid": ("x",),
    "hardsigmoid": ("x",), "hardswish": ("x",), "glu": ("image",), "threshold": ("x", 0.5, 0.0),
    "threshold_": ("x", 0.5, 0.0), "hardshrink": ("x",), "softshrink": ("x",), "tanhshrink": ("x",),
    "prelu": ("x", "row"), "normalize": ("x",), "cosine_similarity": ("x", "y"), "pairwise_distance": ("x", "y"),
    "kl_div": ("x", "y"), "gaussian_nll_loss": ("x", "y", "y"),
    "conv1d": ("sequence", "kernel1d", "channels"), "max_pool1d": ("sequence", 2), "avg_pool1d": ("sequence", 2),
    "adaptive_avg_pool1d": ("sequence", 2), "adaptive_max_pool1d": ("sequence", 2), "adaptive_max_pool2d": ("image", 2),
    "group_norm": ("image", 2, "pair", "pair"), "instance_norm": ("image", "pair", "pair", "pair", "pair"),
    "interpolate": ("image", 3),
    "margin_ranking_loss": ("row", "row", "row"), "hinge_embedding_loss": ("x", "y"),
    "cosine_embedding_loss": ("x", "y", "pair"), "soft_margin_loss": ("x", "y"),
    "multilabel_soft_margin_loss": ("x", "y", "row"), "multi_margin_loss": ("x", "labels", {"weight": "row"}),
    "multilabel_margin_loss": ("x", "label_lists"), "triplet_margin_loss": ("x", "y", "x"),
    "triplet_margin_with_distance_loss": ("x", "y", "x"), "poisson_nll_loss": ("x", "y"), "pdist": ("x",),
    "rrelu": ("x",), "rrelu_": ("x",), "alpha_dropout": ("x",), "feature_alpha_dropout": ("x",),
    "gumbel_softmax": ("x",), "local_response_norm": ("image", 2), "lp_pool1d": ("sequence", 2.0, 2),
    "lp_pool2d": ("image", 2.0, 2), "max_pool1d_with_indices": ("sequence", 2), "max_pool2d_with_indices": ("image", 2),
    "adaptive_max_pool1d_with_indices": ("sequence", 2), "adaptive_max_pool2d_with_indices": ("image", 2),
    "upsample": ("image", 3), "upsample_nearest": ("image", 3), "upsample_bilinear": ("image", 3),
    "embedding_bag": ("labels", "table", "labels"),
    "scaled_dot_product_attention": ("x", "y", "y"), "rms_norm": ("x", (3,), "row"),
    "bilinear": ("x", "y", "bilinear_weight", "bias"),
    "conv3d": ("volume", "kernel3d", "channels"), "conv_transpose3d": ("volume", "up_kernel3d", "channels"),
    "max_pool3d": ("volume", 2), "avg_pool3d": ("volume", 2), "adaptive_avg_pool3d": ("volume", 2),
    "adaptive_max_pool3d": ("volume", 2), "max_pool3d_with_indices": ("volume", 2),
    "adaptive_max_pool3d_with_indices": ("volume", 2), "lp_pool3d": ("volume", 2.0, 2),
    "max_unpool1d": ("sequence", "indices1d", 2), "max_unpool2d": ("image", "indices2d", 2),
    "max_unpool3d": ("volume", "indices3d", 2), "affine_grid": ("theta", (1, 2, 3, 3), False),
    "grid_sample": ("image", "grid"), "ctc_loss": ("tokens", "ctc_targets", (3,), (2,)),
    "multi_head_attention_forward": ("tokens", "tokens", "tokens", 4, 2, "in_proj", "in_bias", None, None, False, 0.0,
                                     "out_proj", "bias"),
}


def test_every_public_function_has_a_call():
    assert {"relu", "linear", "cross_entropy", "pad"} <= FUNCTIONAL and {"cat", "where", "pow"} <= COMBINING
    assert set(CALLS) == FUNCTIONAL | COMBINING


def _slots(spec: tuple) -> list:
    """Where the named values sit in a call: (i,) an argument, (i, j) item j of a list, (key,) a keyword."""
    slots = []
    for i, arg in enumerate(spec):
        if isinstance(arg, str):
            slots.append((i,))
        elif isinstance(arg, list):
            slots += [(i, j) for j in range(len(arg))]
        elif isinstance(arg, dict):
            slots += [(key,) for key in arg]
    return slots


REPLACEMENTS = {"float": lambda v: 2.0, "int": lambda v: 3, "list": lambda v: _as_list(v),
                "ndarray": lambda v: np.array(_as_list(v))}


def _as_list(value) -> list:
    return value.tolist() if hasattr(value, "tolist") else list(value)


def _function(lib, name: str):
    if lib is minigrad:
        return getattr(F if name in FUNCTIONAL else minigrad, name)
    if name == "flatten":  # (minigrad's F.flatten is torch.flatten; torch.nn.functional has none)
        return torch.flatten
    return getattr(torch.nn.functional if name in FUNCTIONAL else torch, name)


def _call(lib, name: str, slot: tuple, kind: str):
    named = _named(lib)
    resolve = lambda a: named[a] if isinstance(a, str) else a  # noqa: E731
    args, kwargs = [], {}
    for arg in CALLS[name]:
        if isinstance(arg, dict):
            kwargs = {key: resolve(value) for key, value in arg.items()}
        elif isinstance(arg, list):
            args.append([resolve(a) for a in arg])
        else:
            args.append(resolve(arg))
    replace = REPLACEMENTS[kind]
    if isinstance(slot[0], str):
        kwargs[slot[0]] = replace(kwargs[slot[0]])
    elif len(slot) == 2:
        args[slot[0]][slot[1]] = replace(args[slot[0]][slot[1]])
    else:
        args[slot[0]] = replace(args[slot[0]])
    return _function(lib, name)(*args, **kwargs)


def _outcome(fn):
    """("ok", values) or (exception type, message)."""
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__, str(e)
    results = result if isinstance(result, tuple) and not isinstance(result, (minigrad.Size, torch.Size)) else [result]
    return "ok", [np.asarray(r.detach().numpy() if hasattr(r, "detach") else r) for r in results]


CASES = [(name, slot, kind) for name in sorted(CALLS) for slot in _slots(CALLS[name]) for kind in REPLACEMENTS]


def _id(case) -> str:
    name, slot, kind = case
    return f"{name}-{'.'.join(map(str, slot))}-{kind}"


@pytest.mark.filterwarnings("ignore::UserWarning")  # (size mismatches the losses warn about)
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_an_argument_that_is_not_a_tensor_is_refused_as_in_torch(case):
    mine = _outcome(lambda: _call(minigrad, *case))
    theirs = _outcome(lambda: _call(torch, *case))
    if theirs[0] == "AttributeError":
        # torch's function is pure Python there (F.softmax, the losses ...) and fails on a method
        # the array lacks: minigrad's TypeError is the better answer.
        theirs = ("TypeError", theirs[1])
    assert mine[0] == theirs[0], f"{_id(case)}: minigrad {mine}, torch {theirs}"
    if mine[0] == "ok":
        for m, t in zip(mine[1], theirs[1], strict=True):
            assert m.dtype == t.dtype, f"{_id(case)}: minigrad {m.dtype}, torch {t.dtype}"
            np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)


# torch's messages for one argument that is not a tensor.
ARGUMENT = re.compile(r"(?P<fn>\w+)\(\): argument '(?P<name>\w+)' \(position \d+\) must be Tensor, not [\w.]+")
ELEMENT = re.compile(r"expected Tensor as element \d+ in argument \d+, but got [\w.]+")


def _expected_message(name: str, slot: tuple, kind: str) -> str:
    """torch's words, the argument numbered as in minigrad's signature, and the fix for data."""
    type_name = {"float": "float", "int": "int", "list": "list", "ndarray": "numpy.ndarray"}[kind]
    fix = ": wrap it with minigrad.tensor(...) first" if kind in ("list", "ndarray") else ""
    if name in ("cat", "stack", "broadcast_tensors"):
        return f"expected Tensor as element {slot[-1]} in argument 0, but got {type_name}{fix}"
    parameters = list(inspect.signature(_function(minigrad, name)).parameters)
    argument = slot[0] if isinstance(slot[0], str) else parameters[slot[0]]
    position = parameters.index(argument) + 1
    return f"{name}(): argument '{argument}' (position {position}) must be Tensor, not {type_name}{fix}"


@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "broadcast_shapes"], ids=_id)
def test_the_message_is_torchs_with_the_fix(case):
    kind, message = _outcome(lambda: _call(minigrad, *case))
    if kind == "ok":  # (a number in where or pow: compared with torch above)
        return
    assert message == _expected_message(*case)
    # Where torch names the same function and argument, its words are the same. Its positions may
    # differ: they count in its C++ signature (batch_norm's running_mean is its 4th argument).
    torch_kind, torch_message = _outcome(lambda: _call(torch, *case))
    torch_argument, argument = ARGUMENT.fullmatch(torch_message), ARGUMENT.match(message)
    if (torch_argument and torch_argument.group("fn", "name") == argument.group("fn", "name")
            or ELEMENT.fullmatch(torch_message)):
        drop_position = lambda m: re.sub(r" \(position \d+\)", "", m)  # noqa: E731
        assert drop_position(message).startswith(drop_position(torch_message)), f"{message}\ntorch: {torch_message}"


@pytest.mark.parametrize("tensors", ["tensor", "ndarray", "generator", "float"])
@pytest.mark.parametrize("name", ["cat", "stack"])
def test_cat_and_stack_take_a_list_or_tuple_as_torch(name, tensors):
    """Not a tensor (whose rows minigrad's cat used to join), nor any other iterable."""
    def call(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        argument = {"tensor": x, "ndarray": x.numpy(), "generator": (t for t in (x, x)), "float": 2.0}[tensors]
        return getattr(lib, name)(argument)
    mine, theirs = _outcome(lambda: call(minigrad)), _outcome(lambda: call(torch))
    assert mine[0] == theirs[0] == "TypeError"
    assert mine[1] == theirs[1]
