"""A batch of sequences of different lengths, as one padded tensor (and back).

``pad_sequence([a, b, c])`` stacks sequences of shapes (L_i, *) into one (L_max, B, *) tensor
(``batch_first=True``: (B, L_max, *)), filling the missing steps with ``padding_value``.
minigrad has no ``PackedSequence``: its recurrent layers run every step of the padded batch.
"""
from __future__ import annotations

from typing import Sequence

from minigrad.functional_ops import stack
from minigrad.nn.functional import pad
from minigrad._tensor import Tensor


def pad_sequence(sequences: Sequence[Tensor] | Tensor, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack ``sequences`` (each (L_i, *)) into one tensor padded to the longest (recorded)."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        widths = [0, 0] * (s.dim() - 1) + ([0, missing] if padding_side == "right" else [missing, 0])
        padded.append(pad(s, widths, value=padding_value) if missing else s)
    return stack(padded, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """The sequences ``pad_sequence`` stacked, cut back to their ``lengths``. (PyTorch's also
    transposes ``padded_sequences`` in place when not ``batch_first``; minigrad leaves it alone.)"""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(length)] for seq, length in zip(padded_sequences, lengths)]
