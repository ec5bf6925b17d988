"""``minigrad.save`` and ``minigrad.load``: write tensors, state dicts and models to a file and back.

    minigrad.save(model.state_dict(), "model.pth")
    model.load_state_dict(minigrad.load("model.pth", weights_only=True))

The file is a plain Python pickle (not PyTorch's zip format, so the two
libraries cannot read each other's files). A tensor pickles as its NumPy
array and its ``requires_grad`` flag; its graph, hooks and ``.grad`` are not saved.

Unpickling can run arbitrary code, so ``load`` defaults to ``weights_only=True``,
as PyTorch does since 2.6: it then rebuilds only tensors, NumPy arrays,
Python containers (dict, OrderedDict, list, tuple, set) and numbers, strings,
booleans and None, which is everything a ``state_dict`` (of a model or an
optimizer) holds. A whole pickled model (``minigrad.save(model, path)``) needs
``weights_only=False``: only do that for files you trust.
"""
from __future__ import annotations

import os
import pickle
from typing import IO, Any, Callable

from minigrad.device import device, resolve

__all__ = ["save", "load"]

# The globals a weights-only file may name: how tensors, arrays and OrderedDicts rebuild themselves.
_SAFE_GLOBALS = {
    ("collections", "OrderedDict"),
    ("minigrad._tensor", "_rebuild_tensor"),
    ("minigrad.core.tensor", "Tensor"),
    ("minigrad.nn.parameter", "Parameter"),
    ("minigrad.device", "device"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("_codecs", "encode"),  # protocol 2 stores bytes this way
}


class _WeightsOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        module, name = _MOVED.get((module, name), (module, name))
        if (module, name) in _SAFE_GLOBALS or (module == "numpy.dtypes" and name.endswith("DType")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Weights only load failed: the file names the global {module}.{name}, which weights_only=True "
            "does not rebuild (it loads only tensors, arrays, containers and plain values). If the file "
            "holds a whole model and you trust its source, call minigrad.load(..., weights_only=False)."
        )


# Files saved before the core was carved out name the tensor's old module.
_MOVED = {("minigrad.tensor", "_rebuild_tensor"): ("minigrad._tensor", "_rebuild_tensor"),
          ("minigrad.tensor", "Tensor"): ("minigrad.core.tensor", "Tensor")}


def _open(f, mode: str):
    """A path is opened (and closed by the caller); a file object is used as it is."""
    if isinstance(f, (str, os.PathLike)):
        return open(f, mode), True
    return f, False


def save(obj: Any, f: "str | os.PathLike | IO[bytes]", pickle_module=pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Pickle ``obj`` (a tensor, a state dict, any picklable object) to a path or a binary file object.

    ``_use_new_zipfile_serialization`` is accepted for PyTorch's signature and ignored.
    """
    handle, owned = _open(f, "wb")
    try:
        pickle_module.dump(obj, handle, protocol=pickle_protocol)
    finally:
        if owned:
            handle.close()


def load(f: "str | os.PathLike | IO[bytes]", map_location: "str | Callable | dict | None" = None,
         pickle_module=None, *, weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Read back what ``save`` wrote.

    ``weights_only`` (default True, as in PyTorch 2.6+) refuses anything but
    tensors, arrays, containers and plain values; see the module docstring.
    ``map_location`` exists for PyTorch's signature: everything loads onto the
    CPU, the only device, so ``"cpu"``, a ``device("cpu")``, a dict or a
    function are accepted and change nothing, while another device raises.
    ``mmap`` is accepted and ignored.
    """
    if isinstance(map_location, (str, device)):
        resolve(map_location)
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError(
            "Can not safely load weights when explicit pickle_module is specified: drop pickle_module, "
            "or pass weights_only=False for a file you trust"
        )
    handle, owned = _open(f, "rb")
    try:
        if weights_only:
            return _WeightsOnlyUnpickler(handle, **pickle_load_args).load()
        return (pickle_module or pickle).load(handle, **pickle_load_args)
    finally:
        if owned:
            handle.close()
