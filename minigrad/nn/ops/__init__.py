"""The Functions behind ``minigrad.nn.functional`` that need their own derivative.

One file per family, as in ``minigrad/ops``: ``conv`` (conv2d and max_pool2d,
around the Numba kernels), ``loss`` (the fused cross-entropy), ``linear``
(the fused linear layer), ``activation`` (erf, gelu, softplus, leaky_relu) and
``binary_cross_entropy`` (with PyTorch's clamps at 0 and 1). Everything else
in ``functional`` is built from tensor operations and needs no Function. ``rnn``
holds the steps of nn.RNN, nn.LSTM and nn.GRU: each from tensor operations, and
the LSTM and GRU steps also as one node each, for speed. ``ctc`` is the CTC loss's
forward and backward recursions, over the whole batch in NumPy.
"""
