"""``minigrad.nn``: layers, losses and the Module class that ties them together.

Read it in this order: ``parameter.py`` (a tensor to train), ``module.py``
(registering parameters and sub-modules), ``functional/`` (the computations,
as functions, one file per family), ``modules/`` (the layers that hold parameters and call them),
``init.py`` (how the parameters start).

    import minigrad.nn as nn
    import minigrad.nn.functional as F

    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    loss = F.cross_entropy(model(x), y)
"""
from minigrad.nn import functional, init, parallel, utils
from minigrad.nn.parallel import DataParallel
from minigrad.nn.module import Module
from minigrad.nn.modules import *  # noqa: F403  (the layers; their list is modules.__all__)
from minigrad.nn.modules import __all__ as _layers
from minigrad.nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["DataParallel", "Module", "Parameter", "UninitializedBuffer", "UninitializedParameter", "functional", "init",
           "parallel", "utils",
           *_layers]
