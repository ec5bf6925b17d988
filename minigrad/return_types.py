"""The named results of ops that give values and their indices, as ``torch.return_types``.

``x.max(dim)`` returns a ``minigrad.return_types.max``: a tuple (so
``values, indices = x.max(0)`` works) whose parts also have names
(``x.max(0).indices``), printed as PyTorch prints them.
"""
from __future__ import annotations

from collections import namedtuple


def _named(name: str, *fields: str) -> type:
    def __repr__(self) -> str:
        parts = ",\n".join(f"{field}={value!r}" for field, value in zip(fields, self))
        return f"minigrad.return_types.{name}(\n{parts})"

    return type(name, (namedtuple(name, fields),),
                {"__slots__": (), "__repr__": __repr__, "__module__": __name__, "__qualname__": name})


def _values_and_indices(name: str) -> type:
    return _named(name, "values", "indices")


max = _values_and_indices("max")  # noqa: A001  (PyTorch's names: torch.return_types.max, ...)
min = _values_and_indices("min")  # noqa: A001
sort = _values_and_indices("sort")
topk = _values_and_indices("topk")
cummax = _values_and_indices("cummax")
cummin = _values_and_indices("cummin")
median = _values_and_indices("median")
nanmedian = _values_and_indices("nanmedian")
mode = _values_and_indices("mode")
kthvalue = _values_and_indices("kthvalue")
aminmax = _named("aminmax", "min", "max")
frexp = _named("frexp", "mantissa", "exponent")
histogram = _named("histogram", "hist", "bin_edges")
slogdet = _named("slogdet", "sign", "logabsdet")
linalg_slogdet = _named("linalg_slogdet", "sign", "logabsdet")
linalg_qr = _named("linalg_qr", "Q", "R")
qr = _named("qr", "Q", "R")
linalg_eigh = _named("linalg_eigh", "eigenvalues", "eigenvectors")
linalg_svd = _named("linalg_svd", "U", "S", "Vh")
svd = _named("svd", "U", "S", "V")
linalg_lstsq = _named("linalg_lstsq", "solution", "residuals", "rank", "singular_values")
linalg_inv_ex = _named("linalg_inv_ex", "inverse", "info")
linalg_cholesky_ex = _named("linalg_cholesky_ex", "L", "info")
linalg_solve_ex = _named("linalg_solve_ex", "result", "info")
