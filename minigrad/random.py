"""The one random generator minigrad draws from, seeded by ``manual_seed`` (as ``torch.random``).

randn, rand, randint, randperm, dropout, ``nn.init``, DataLoader's shuffling and
gradgradcheck's random directions all draw from it, so a lesson that calls
``minigrad.manual_seed(0)`` shows every learner the same numbers (not PyTorch's:
its generator is another one). It sits below everything else: it needs only NumPy.
"""
from __future__ import annotations

import numpy as np

_generator = np.random.default_rng(0)
_initial_seed = 0


def manual_seed(seed: int) -> None:
    """Reseed the generator behind randn, rand, randint, dropout and init."""
    global _generator, _initial_seed
    _generator, _initial_seed = np.random.default_rng(seed), int(seed)


def seed() -> int:
    """Reseed from the operating system's entropy (a different stream each time) and return the seed."""
    new_seed = int(np.random.SeedSequence().entropy % (1 << 63))
    manual_seed(new_seed)
    return new_seed


def initial_seed() -> int:
    """The seed the generator was last seeded with (0 at start, unlike PyTorch's, which is random)."""
    return _initial_seed


def generator(source=None) -> np.random.Generator:
    """The NumPy generator a draw uses: minigrad's own, or that of the ``generator=`` argument
    (``source``: a ``minigrad.Generator``, or a ``numpy.random.Generator``)."""
    if source is None:
        return _generator
    if isinstance(source, np.random.Generator):
        return source
    numpy = getattr(source, "_numpy", None)  # a minigrad.Generator (sampling.py, a layer above this one)
    if not isinstance(numpy, np.random.Generator):
        raise TypeError(f"generator must be a minigrad.Generator, not {type(source).__name__}")
    return numpy
