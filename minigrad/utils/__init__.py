"""``minigrad.utils``: the helpers PyTorch keeps in ``torch.utils``.

``minigrad.utils.data`` has ``Dataset``, ``TensorDataset``, ``DataLoader`` and
``random_split``, spelled as in ``torch.utils.data``; ``minigrad.utils.hooks`` has
``RemovableHandle``, the handle every ``register_*hook`` returns; ``minigrad.utils.checkpoint``
recomputes activations in backward instead of keeping them.
"""
from minigrad.utils import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
