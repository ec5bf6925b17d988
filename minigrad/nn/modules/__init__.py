"""The layers, one file per kind, as in ``torch/nn/modules``."""
from minigrad.nn.modules.activation import ReLU, Sigmoid, Tanh
from minigrad.nn.modules.container import ModuleList, Sequential
from minigrad.nn.modules.conv import Conv2d
from minigrad.nn.modules.dropout import Dropout
from minigrad.nn.modules.flatten import Flatten
from minigrad.nn.modules.linear import Linear
from minigrad.nn.modules.loss import CrossEntropyLoss, MSELoss
from minigrad.nn.modules.pooling import MaxPool2d

__all__ = [
    "Linear", "Conv2d", "MaxPool2d", "ReLU", "Tanh", "Sigmoid", "Flatten", "Dropout",
    "Sequential", "ModuleList", "CrossEntropyLoss", "MSELoss",
]
