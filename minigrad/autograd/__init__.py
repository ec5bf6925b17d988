"""``torch.autograd``'s API, as a layer on the core.

The autograd itself (grad mode, the graph, ``Function``, the engine, ``backward``
and ``grad``) is ``minigrad/core/``: read it there, in the order its
``__init__`` gives. The modules here are PyTorch's names for it, plus what
plugs into it from outside: ``views`` (PyTorch's view semantics),
``anomaly_mode`` (which forward line made a backward fail), ``engine``'s ready
queue (PyTorch's exact order among ready nodes), ``graph``'s
``saved_tensors_hooks``, ``function``'s 0.x classes. And what is built on top:
``gradcheck`` (finite differences), ``functional`` (Jacobians, Hessians and
their products, built from ``grad``), ``stateful`` (the older instance-style
Function, kept for teaching).
"""
from minigrad.autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from minigrad.autograd.function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from minigrad.autograd.differentiate import backward, grad
from minigrad.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from minigrad.autograd.stateful import StatefulFunction
from minigrad.autograd.anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from minigrad.autograd import anomaly_mode, function, functional, engine, graph
from minigrad.autograd.multi_grad_hook import register_multi_grad_hook

graph.register_multi_grad_hook = register_multi_grad_hook  # (PyTorch's place for it: torch.autograd.graph)

__all__ = [
    "Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction", "StatefulFunction", "gradcheck", "gradgradcheck", "GradcheckError", "once_differentiable", "backward", "grad", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "anomaly_mode", "function", "functional", "engine", "graph",
]
