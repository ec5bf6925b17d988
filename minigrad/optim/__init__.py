"""``minigrad.optim``: optimizers that update parameters from their ``.grad``.

    optimizer = minigrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

Read ``optimizer.py`` first (what all optimizers share), then ``sgd.py`` and ``adam.py``.
"""
from minigrad.optim.adam import Adam
from minigrad.optim.optimizer import Optimizer
from minigrad.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam"]
