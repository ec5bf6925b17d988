"""``minigrad.optim``: optimizers that update parameters from their ``.grad``.

    optimizer = minigrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

Read ``optimizer.py`` first (what all optimizers share), then ``sgd.py``,
``adam.py`` (Adam and AdamW) and ``rmsprop.py``; then, each starting from
one of those, ``adagrad.py`` (Adagrad and Adadelta: a step size per
coordinate), ``adam_variants.py`` (Adamax, NAdam, RAdam), ``asgd.py``
(averaged SGD) and ``rprop.py`` (steps from the gradient's sign alone).
``lbfgs.py`` is different: a quasi-Newton method whose ``step(closure)``
evaluates the loss many times. ``lr_scheduler.py`` changes the learning rate
from epoch to epoch; ``swa_utils.py`` averages the weights along the way.
"""
from minigrad.optim import lr_scheduler, swa_utils
from minigrad.optim.adagrad import Adadelta, Adagrad
from minigrad.optim.adam import Adam, AdamW
from minigrad.optim.adam_variants import Adamax, NAdam, RAdam
from minigrad.optim.asgd import ASGD
from minigrad.optim.lbfgs import LBFGS
from minigrad.optim.optimizer import Optimizer
from minigrad.optim.rmsprop import RMSprop
from minigrad.optim.rprop import Rprop
from minigrad.optim.sgd import SGD

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD",
    "Rprop", "LBFGS", "lr_scheduler", "swa_utils",
]
