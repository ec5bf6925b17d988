"""How fast could a PyTorch-style autograd in pure Python be? A yardstick for minigrad's per-op cost.

    python bench/bare_floor.py

Issue 14 asks minigrad to take at most 0.8x MyGrad's time on tiny graphs. This
file times, side by side, the two tiny workloads of ``bench_suite.py --only
overhead`` in three autograds:

* **minigrad**, as shipped;
* **MyGrad**, when installed (its custom op works on arrays: ``Operation``);
* **bare**: the autograd below, in ~60 lines, with minigrad's *API shape*
  (a ``Function`` with ``ctx.save_for_backward``, whose forward and backward
  use tensor operations run unrecorded; a topological backward) but with none
  of its checks and features: no hooks, views, version counters, dtype rules,
  gradient validation, anomaly mode, retain_graph or error messages.

So ``bare`` is a floor, not a design: the gap between it and minigrad is the
price of what minigrad checks and supports on every op, and the gap between
it and MyGrad says that the API shape (tensor ops inside ``forward`` and
``backward``) is not what makes minigrad slower than MyGrad.
"""
from __future__ import annotations

import sys
import timeit
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, no install needed
import minigrad  # noqa: E402
from bench_suite import (  # noqa: E402
    custom_function_case, custom_function_mygrad, load_mygrad, mul_add_sum_case, mul_add_sum_mygrad,
)


class BareTensor:
    __slots__ = ("data", "grad", "requires_grad", "grad_fn")

    def __init__(self, data: np.ndarray, requires_grad: bool = False) -> None:
        self.data, self.grad, self.requires_grad, self.grad_fn = data, None, requires_grad, None

    def __mul__(self, other):
        return Mul.apply(self, other)

    def __add__(self, other):
        return Add.apply(self, other)

    def sum(self):
        return Sum.apply(self)

    def detach(self):
        return BareTensor(self.data)

    def numpy(self) -> np.ndarray:
        return self.data

    def backward(self, gradient=None) -> None:
        order, seen = [], set()  # nodes after all their consumers: reversed depth-first post-order
        stack = [(self.grad_fn, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((child, False) for child in node.children if child is not None)
        grads = {self.grad_fn: gradient if gradient is not None else BareTensor(np.ones_like(self.data))}
        for node in reversed(order):
            input_grads = node.function.backward(node, grads.pop(node))
            for child, leaf, g in zip(node.children, node.leaves, input_grads if type(input_grads) is tuple else (input_grads,)):
                if child is not None:
                    grads[child] = g if child not in grads else BareTensor(grads[child].data + g.data)
                elif leaf is not None:
                    leaf.grad = BareTensor(g.data.copy()) if leaf.grad is None else BareTensor(leaf.grad.data + g.data)


class Ctx:
    __slots__ = ("function", "children", "leaves", "saved_tensors", "__dict__")

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors = tensors


_recording = [True]


def _array(x):
    return x.data if type(x) is BareTensor else x


class Function:
    @classmethod
    def apply(cls, *args):
        """Run forward unrecorded (its tensor ops too); record one node if an input requires grad."""
        ctx = Ctx()
        ctx.function = cls
        recording = _recording[0] and any(type(a) is BareTensor and a.requires_grad for a in args)
        was, _recording[0] = _recording[0], False
        try:
            out = cls.forward(ctx, *args)
        finally:
            _recording[0] = was
        if type(out) is not BareTensor:  # (a built-in op computes an array)
            out = BareTensor(out)
        if recording:
            ctx.children = [a.grad_fn if type(a) is BareTensor else None for a in args]
            ctx.leaves = [a if type(a) is BareTensor and a.requires_grad and a.grad_fn is None else None for a in args]
            out.requires_grad, out.grad_fn = True, ctx
        return out


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _array(a) * _array(b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        return _array(a) + _array(b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sum(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.shape = a.data.shape
        return a.data.sum()

    @staticmethod
    def backward(ctx, grad):
        return BareTensor(np.broadcast_to(grad.data, ctx.shape))


# The module-like face bench_suite's workloads take (``lib.tensor``, ``lib.ones``,
# ``lib.autograd.Function``), so the bare autograd runs exactly their code.
bare = SimpleNamespace(
    tensor=lambda data, requires_grad=False: BareTensor(np.array(data, np.float32), requires_grad),
    ones=lambda n: BareTensor(np.ones(n, np.float32)),
    autograd=SimpleNamespace(Function=Function),
)


def main() -> None:
    cases = (("custom Function y=2x fwd+bwd", custom_function_case, custom_function_mygrad),
             ("(x*y+z).sum().backward()", mul_add_sum_case, mul_add_sum_mygrad))
    mygrad = load_mygrad()  # None when MyGrad is not installed: its column stays empty
    print(f"{'case':32s} {'minigrad':>10s} {'bare':>10s} {'mygrad':>10s}   mg/bare  bare/mygrad  mg/mygrad")
    for label, make_case, make_mygrad in cases:
        makers = {"minigrad": lambda: make_case(minigrad), "bare": lambda: make_case(bare)}
        if mygrad is not None:
            makers["mygrad"] = make_mygrad
        steps, results = {}, {}
        for name, make in makers.items():
            steps[name], result = make()
            results[name] = result()
        for name, got in results.items():  # the three agree before anything is timed
            for key, want in results["minigrad"].items():
                np.testing.assert_allclose(np.asarray(got[key]), np.asarray(want), rtol=1e-6, err_msg=f"{label}: {name} {key}")
        times = {name: [] for name in steps}
        for _ in range(7):  # interleaved, so that a drift of the machine hits all three alike
            for name, step in steps.items():
                times[name].append(min(timeit.repeat(step, number=2000, repeat=3)) / 2000 * 1e6)
        med = {name: float(np.median(t)) for name, t in times.items()}
        my = med.get("mygrad", float("nan"))
        print(f"{label:32s} {med['minigrad']:8.1f}us {med['bare']:8.1f}us {my:8.1f}us   "
              f"{med['minigrad'] / med['bare']:6.2f}x  {med['bare'] / my:10.2f}x  {med['minigrad'] / my:8.2f}x")


if __name__ == "__main__":
    main()
