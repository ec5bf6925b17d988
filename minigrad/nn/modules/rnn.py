"""Recurrent layers: ``RNN``, ``LSTM`` and ``GRU`` over whole sequences, and their one-step ``...Cell``s.

A recurrent layer reads a sequence one step at a time and carries a state from step to step,
h_t = cell(x_t, h_{t-1}), with the same weights at every step. PyTorch's cells (the W_i*, b_i* act
on x, the W_h*, b_h* on h; a weight holds its gates one above the other, in the order named):

    RNN   h' = tanh(W_ih x + b_ih + W_hh h + b_hh)                (nonlinearity='relu': relu)
    LSTM  i, f, g, o = W_ih x + b_ih + W_hh h + b_hh
          c' = sigmoid(f) * c + sigmoid(i) * tanh(g)      the cell state: a sum, so its gradient
          h' = sigmoid(o) * tanh(c')                      survives many steps (while f stays near 1)
          (with proj_size: h' = W_hr h', a smaller hidden state)
    GRU   r, z, n: gi = W_ih x + b_ih and gh = W_hh h + b_hh, each cut in three
          r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r * gh_n)
          h' = (1 - z) * n + z * h

The steps are ``minigrad/nn/ops/rnn.py``'s, defined there from tensor operations (linear, sigmoid,
tanh, chunk); an LSTM or GRU step runs as one node whose backward is written out, and which
differentiates the definition under create_graph. The loop here stacks the steps' outputs, so
autograd differentiates through the whole sequence ("backpropagation through time") to any order.
As PyTorch does on the CPU, a layer applies W_ih to every step at once (one matrix product over
sequence_length x batch rows) before its loop: only W_hh h has to wait for the previous step.

minigrad has no ``PackedSequence``: pad the sequences of a batch to one length instead.
"""
from __future__ import annotations

import math
import numbers
import warnings

from minigrad.creation import zeros
from minigrad.functional_ops import cat, stack
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.module import Module
from minigrad.nn.ops.rnn import State, Step, fused_gru_step, fused_lstm_step, rnn_relu_step, rnn_tanh_step
from minigrad.nn.parameter import Parameter
from minigrad._tensor import Tensor

_STEPS: dict[str, Step] = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "LSTM": fused_lstm_step,
                          "GRU": fused_gru_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _reset_uniform(module: Module, hidden_size: int) -> None:
    """PyTorch's init for every recurrent weight and bias: U(±1/sqrt(hidden_size))."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -bound, bound)


# -- cells: one step, the loop is the caller's ----------------------------------------------------------------
class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` (gates x hidden_size, input_size), ``weight_hh`` (gates x hidden_size,
    hidden_size) and the biases ``bias_ih``, ``bias_hh``, all U(±1/sqrt(hidden_size)) as in PyTorch."""

    input_size: int
    hidden_size: int
    bias: bool

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(zeros(gates, input_size, dtype=dtype, device=device))
        self.weight_hh = Parameter(zeros(gates, hidden_size, dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(zeros(gates, dtype=dtype, device=device))
            self.bias_hh = Parameter(zeros(gates, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        return s

    def _batched(self, input: Tensor, hx: tuple | None, num_states: int) -> tuple[Tensor, State, bool]:
        """(input as (batch, input_size), the state as 2-D tensors (zeros if not given), whether input was batched).

        The checks are PyTorch's, with its exception types: ranks are a ValueError, sizes a RuntimeError.
        """
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead: pass (batch, "
                             f"input_size) or one (input_size,) vector")
        if hx is not None:
            for k, h in enumerate(hx):
                if h.dim() not in (1, 2):
                    label = "hidden" if len(hx) == 1 else f"hx[{k}]"
                    raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {h.dim()}D instead: pass (batch, "
                                     f"hidden_size), or (hidden_size,) with unbatched input")
        batched = input.dim() == 2
        if hx is not None and any(h.dim() != input.dim() for h in hx):
            ranks = ", ".join(f"{h.dim()}-D" for h in hx)
            raise RuntimeError(f"{name}: the state ({ranks}) must have the input's rank ({input.dim()}-D): (batch, "
                               "hidden_size) for a batch of inputs, (hidden_size,) for one input")
        if not batched:
            input = input.unsqueeze(0)
            hx = None if hx is None else tuple(h.unsqueeze(0) for h in hx)
        if hx is None:
            h0 = zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (h0,) * num_states
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                               f"{self.input_size}: the cell was built with input_size={self.input_size}")
        for k, h in enumerate(hx):
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size "
                                   f"{h.shape[0]}: the state is (batch, hidden_size) for a batch of inputs")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {h.shape[1]}, expected "
                                   f"{self.hidden_size}: the cell was built with hidden_size={self.hidden_size}")
        return input, hx, batched

    def _step(self, step: Step, input: Tensor, hx: tuple | None, num_states: int = 1) -> State:
        input, hx, batched = self._batched(input, hx, num_states)
        state = step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh, None)
        return state if batched else tuple(h.squeeze(0) for h in state)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu). ``hx`` defaults to zeros."""

    nonlinearity: str

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity  # (checked at the call, as PyTorch does)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if input.dim() in (1, 2) and self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}: use 'tanh' or 'relu'")
        step = rnn_tanh_step if self.nonlinearity == "tanh" else rnn_relu_step
        return self._step(step, input, None if hx is None else (hx,))[0]

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s if self.nonlinearity == "tanh" else f"{s}, nonlinearity={self.nonlinearity}"


class LSTMCell(RNNCellBase):
    """One step of an LSTM: returns (h', c'); ``hx`` is the pair (h, c), zeros if not given."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        return self._step(fused_lstm_step, input, hx, num_states=2)


class GRUCell(RNNCellBase):
    """One step of a GRU: h' = (1 - z) * n + z * h (see the module docstring). ``hx`` defaults to zeros."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(fused_gru_step, input, None if hx is None else (hx,))[0]


# -- layers: the loop over the sequence, stacked and in both directions ----------------------------------------
class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters, the checks of the input and state, and the loop.

    Layer ``k`` has ``weight_ih_l{k}``, ``weight_hh_l{k}`` (and ``bias_ih_l{k}``, ``bias_hh_l{k}``,
    ``weight_hr_l{k}`` with proj_size), and the same with the suffix ``_reverse`` for the backward
    direction of a bidirectional layer: PyTorch's names and shapes, so a PyTorch state_dict loads.
    ``mode`` is "RNN_TANH", "RNN_RELU", "LSTM" or "GRU".
    """

    mode: str
    input_size: int
    hidden_size: int
    num_layers: int
    bias: bool
    batch_first: bool
    dropout: float
    bidirectional: bool
    proj_size: int
    _all_weights: list[list[str]]  # the parameter names of each layer and direction, in PyTorch's order

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=3)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        self._all_weights = []
        gates, out_size = _GATES[mode] * hidden_size, proj_size or hidden_size
        directions = 2 if bidirectional else 1
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for suffix in ("", "_reverse")[:directions]:
                shapes = {"weight_ih": (gates, layer_input), "weight_hh": (gates, out_size)}
                if bias:
                    shapes.update(bias_ih=(gates,), bias_hh=(gates,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    names.append(f"{kind}_l{layer}{suffix}")
                    setattr(self, names[-1], Parameter(zeros(*shape, dtype=dtype, device=device)))
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def flatten_parameters(self) -> None:
        """A no-op, as PyTorch's is off cuDNN: it packs the weights into one buffer for cuDNN, which minigrad lacks."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction: [[weight_ih_l0, weight_hh_l0, ...], ...]."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _forward(self, input: Tensor, hx: tuple | None) -> tuple[Tensor, State]:
        """(output, the final states stacked as (num_layers * num_directions, batch, size)) for ``hx``'s tuple."""
        input, hx, batched = self._checked(input, hx)
        if self.batch_first:
            input = input.transpose(0, 1)
        step, directions = _STEPS[self.mode], 2 if self.bidirectional else 1
        initial = [h.unbind(0) for h in hx]  # per state: one (batch, size) tensor per layer and direction
        finals = []
        for layer in range(self.num_layers):
            if layer > 0:
                input = F.dropout(input, self.dropout, self.training)
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
                state = tuple(h[k] for h in initial)
                steps = F.linear(input, w_ih, b_ih).unbind(0)  # W_ih x + b_ih of every step at once
                out = []
                for gi in (reversed(steps) if direction else steps):
                    state = step(gi, state, w_hh, b_hh, w_hr)
                    out.append(state[0])
                outputs.append(stack(out[::-1] if direction else out))
                finals.append(state)
            input = outputs[0] if directions == 1 else cat(outputs, 2)
        output = input.transpose(0, 1) if self.batch_first else input
        h_n = tuple(stack([state[i] for state in finals]) for i in range(len(hx)))
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), tuple(h.squeeze(1) for h in h_n)
        return output, h_n

    def _weights(self, layer: int, direction: int) -> tuple:
        """(weight_ih, weight_hh, bias_ih, bias_hh, weight_hr) of a layer and direction, None for those it lacks.

        Read by name at each call, so a parameter replaced or loaded after construction is the one used.
        """
        suffix = f"_l{layer}_reverse" if direction else f"_l{layer}"
        return tuple(getattr(self, kind + suffix, None)
                     for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _checked(self, input: Tensor, hx: tuple | None) -> tuple[Tensor, State, bool]:
        """(input as 3-D, the initial states as 3-D tensors, zeros if not given, whether input was batched).

        PyTorch's checks, in its order and with its exception types.
        """
        name, names = type(self).__name__, "hx and cx" if self.mode == "LSTM" else "hx"
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D instead: pass "
                             "(sequence_length, input_size) or a batch, (sequence_length, batch, input_size) "
                             "((batch, sequence_length, input_size) with batch_first=True)")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            hx = (hx[0], hx[1]) if self.mode == "LSTM" else hx
            rank = 3 if batched else 2
            if any(h.dim() != rank for h in hx):
                ranks = ", ".join(f"{h.dim()}-D" for h in hx)
                got = f"({ranks}) tensors" if len(hx) > 1 else f"{ranks} tensor"
                raise RuntimeError(f"For {'batched 3-D' if batched else 'unbatched 2-D'} input, {names} should "
                                   f"also be {rank}-D but got {got}: the state is (num_layers * num_directions, "
                                   f"{'batch, ' if batched else ''}hidden_size)")
            if not batched:
                hx = tuple(h.unsqueeze(1) for h in hx)
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
                             f"Convert input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")
        length, batch = input.shape[:2] if not self.batch_first else input.shape[1::-1]
        layers = self.num_layers * (2 if self.bidirectional else 1)
        sizes = [(layers, batch, self.proj_size or self.hidden_size)]
        if self.mode == "LSTM":
            sizes.append((layers, batch, self.hidden_size))
        if hx is None:
            hx = tuple(zeros(*size, dtype=input.dtype, device=input.device) for size in sizes)
        for k, (h, size) in enumerate(zip(hx, sizes)):
            label = f"hidden[{k}]" if self.mode == "LSTM" else "hidden"
            if tuple(h.shape) != size:
                raise RuntimeError(f"Expected {label} size {size}, got {list(h.shape)}: the state is (num_layers * "
                                   "num_directions, batch, hidden_size), proj_size for an LSTM's h with projections")
            if h.dtype != weight.dtype:
                raise RuntimeError(f"{label} is {h.dtype} but the weights are "
                                   f"{weight.dtype}: convert it with .to({weight.dtype})")
        if length == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        return input, hx, batched


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) (or relu), stacked ``num_layers`` deep.

    ``rnn(input, h0=None)`` -> (output, h_n): output (L, N, D * hidden_size) holds the last layer's h_t at
    every step (D = 2 if bidirectional: forward then backward), h_n (num_layers * D, N, hidden_size) the
    last h of each layer and direction. Input is (L, N, input_size), (N, L, input_size) with batch_first,
    or unbatched (L, input_size). ``dropout`` drops the outputs of every layer but the last, in training.
    """

    nonlinearity: str

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, (h_n,) = self._forward(input, None if hx is None else (hx,))
        return output, h_n


class LSTM(RNNBase):
    """A long short-term memory network: ``lstm(input, (h0, c0))`` -> (output, (h_n, c_n)); the state defaults to zeros.

    Shapes as for ``RNN``; c is (num_layers * D, N, hidden_size). With ``proj_size`` > 0 each h is projected
    to proj_size (``weight_hr_l{k}``), so h0, h_n and the output use proj_size instead of hidden_size.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def forward(self, input: Tensor,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        output, (h_n, c_n) = self._forward(input, hx)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """A gated recurrent unit network: ``gru(input, h0=None)`` -> (output, h_n), shapes as for ``RNN``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, (h_n,) = self._forward(input, None if hx is None else (hx,))
        return output, h_n
