"""PyTorch's path to ``Module`` and to the hooks of every module, so that torch code such as
``from torch.nn.modules.module import register_module_forward_hook`` runs with minigrad.

``Module`` itself lives in ``minigrad/nn/module.py`` and the hooks in ``minigrad/nn/hooks.py``.
"""
from minigrad.nn.hooks import (
    register_module_backward_hook, register_module_buffer_registration_hook, register_module_forward_hook,
    register_module_forward_pre_hook, register_module_full_backward_hook, register_module_full_backward_pre_hook,
    register_module_module_registration_hook, register_module_parameter_registration_hook,
)
from minigrad.nn.module import Module

__all__ = [
    "register_module_forward_pre_hook", "register_module_forward_hook", "register_module_full_backward_pre_hook",
    "register_module_backward_hook", "register_module_full_backward_hook", "register_module_buffer_registration_hook",
    "register_module_module_registration_hook", "register_module_parameter_registration_hook", "Module",
]
