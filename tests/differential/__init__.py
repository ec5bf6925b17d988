"""Differential testing of minigrad against PyTorch.

``program`` generates small random programs over the shared API as plain data
(a list of steps), and ``interpreter`` runs one program with either library and
compares the two traces. A failing program printed by the test is valid Python:
paste it into ``tests/test_differential_regressions.py`` to keep it.
"""
