"""``minigrad.utils.hooks``: ``RemovableHandle`` at PyTorch's path (``torch.utils.hooks``).

The class is autograd's (``minigrad.autograd.graph.RemovableHandle``), which every
``register_*hook`` returns; code that imports it from here, to type-check a handle, finds it.
"""
from minigrad.autograd.graph import RemovableHandle

__all__ = ["RemovableHandle"]
