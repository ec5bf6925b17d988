"""The layers, one file per kind, as in ``torch/nn/modules``."""
from minigrad.nn.modules.activation import (
    CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax,
    Mish, PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softmin, Softplus, Softshrink, Softsign, Tanh, Tanhshrink,
    Threshold,
)
from minigrad.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from minigrad.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from minigrad.nn.modules.conv import Conv2d
from minigrad.nn.modules.distance import CosineSimilarity, PairwiseDistance
from minigrad.nn.modules.dropout import Dropout
from minigrad.nn.modules.flatten import Flatten, Unflatten
from minigrad.nn.modules.linear import Identity, Linear
from minigrad.nn.modules.loss import (
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, GaussianNLLLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss,
    SmoothL1Loss,
)
from minigrad.nn.modules.normalization import LayerNorm
from minigrad.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from minigrad.nn.modules.sparse import Embedding

__all__ = [
    "Linear", "Identity", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "Flatten", "Unflatten", "Dropout",
    "ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "LeakyReLU", "ELU", "Softplus", "Softmax", "LogSoftmax",
    "Hardtanh", "ReLU6", "SELU", "CELU", "Mish", "Softsign", "Softmin", "LogSigmoid", "Hardsigmoid", "Hardswish",
    "GLU", "Threshold", "Hardshrink", "Softshrink", "Tanhshrink", "PReLU",
    "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Embedding", "Sequential", "ModuleList", "ModuleDict",
    "ParameterList", "ParameterDict",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss",
    "KLDivLoss", "GaussianNLLLoss", "CosineSimilarity", "PairwiseDistance",
]
