"""Automatic differentiation: Functions, the graph, the engine and gradcheck.

The order to read minigrad in (the one place it is written down), bottom to top,
each layer importing only the ones below it: this package first, ``grad_mode``
(recording on/off), ``graph`` (nodes, edges, saved tensors), ``function``
(Function and its ctx), ``engine`` (topological order and the backward pass),
``differentiate`` (``backward`` and ``grad``). It knows a tensor only through the
class ``minigrad/tensor.py`` registers with ``graph``. Then ``minigrad/tensor.py``
(the data, and the history it remembers), then ``minigrad/ops/`` (every
derivative, one file per family, each giving Tensor its methods: ``registry``).
When you need them: ``gradcheck`` (finite differences), ``anomaly_mode`` (which
forward line made a backward fail), ``functional`` (Jacobians, Hessians and their
products, built from ``grad``), ``stateful`` (the older instance-style Function,
kept for teaching).
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

__all__ = [
    "Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction", "StatefulFunction", "gradcheck", "gradgradcheck", "GradcheckError", "once_differentiable", "backward", "grad", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "anomaly_mode", "function", "functional", "engine", "graph",
]
