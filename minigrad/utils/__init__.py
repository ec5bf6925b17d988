"""``minigrad.utils``: the helpers PyTorch keeps in ``torch.utils``.

``minigrad.utils.data`` has ``Dataset``, ``TensorDataset``, ``DataLoader`` and
``random_split``, spelled as in ``torch.utils.data``.
"""
from minigrad.utils import data

__all__ = ["data"]
