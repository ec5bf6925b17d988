"""``minigrad.nn.functional``: the layers and losses as plain functions (``import ... as F``).

A Module such as ``Linear`` only stores its parameters and calls the
function here; the function does the computation. Most are a line or two of
tensor operations, so autograd differentiates them (to any order) with no
extra code. A few have a Function of their own in ``minigrad/nn/ops``:
``conv2d`` and ``max_pool2d`` (Numba kernels; ``conv1d`` and ``max_pool1d`` run
them over a height of 1, as PyTorch does; ``conv_transpose2d`` runs conv2d's kernels
the other way round, and ``unfold``/``fold`` are conv2d/conv_transpose2d with one-hot
filters), ``cross_entropy`` and
``linear`` (fused: one node instead of several, for speed), ``gelu`` (a Numba
kernel), ``softplus`` (overflow-free), and ``nll_loss``, ``mse_loss``,
``binary_cross_entropy`` (PyTorch's clamps at 0 and 1) and
``binary_cross_entropy_with_logits``: one node each, reduction included, named
as in PyTorch.

What minigrad leaves out, compared with ``torch.nn.functional``: ``scale_grad_by_freq``
and ``sparse`` in embedding and embedding_bag. The ``inplace=True`` forms of the
activations composed of tensor operations (hardtanh, selu, celu, mish, ...) write
their result back into the input: the same values and gradients as PyTorch's, under
a ``CopyBackwards`` node instead of PyTorch's in-place one.

Each function opens with a guard that costs nothing when its arguments are tensors: anything else
goes to ``_check_tensors``, which refuses a list, a NumPy array or a number with PyTorch's
TypeError (also where PyTorch's own function, written in Python, fails with an AttributeError).

The functions live in one module per family, in this package (each family file imports only
from the ones above it):

- ``_common.py``: the argument guard every family shares (``_check_tensors``)
- ``activations.py``: relu, sigmoid, tanh, softmax, gelu, ... (and the methods hardshrink, prelu)
- ``dense.py``: linear, bilinear
- ``padding.py``: pad
- ``conv.py``: conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold
- ``pooling.py``: max, average, adaptive and lp pools, max_unpool
- ``vision.py``: pixel_shuffle, interpolate and upsample, affine_grid, grid_sample, flatten
- ``sparse.py``: one_hot, embedding, embedding_bag
- ``normalization.py``: layer_norm, batch_norm, group_norm, instance_norm, rms_norm, local_response_norm
- ``dropouts.py``: dropout, dropout1d/2d, alpha_dropout, feature_alpha_dropout
- ``attention.py``: scaled_dot_product_attention, multi_head_attention_forward
- ``distances.py``: normalize, cosine_similarity, pairwise_distance, pdist
- ``losses.py``: cross_entropy, nll_loss, mse_loss, the BCE losses, kl_div, ctc_loss, ... and the reductions
- ``margin_losses.py``: margin, ranking, triplet and counting losses

Every name is re-exported here, so ``minigrad.nn.functional.X`` (and ``F.X``) works as before, and
the public functions carry ``__module__ == "minigrad.nn.functional"``, as torch's do.
"""
from __future__ import annotations

# The imports of the single-file module, kept so that every name it had is still reachable as F.name.
import inspect
import math
import warnings
from collections.abc import Callable
import numpy as np
from minigrad.autograd.grad_mode import no_grad
from minigrad.random import generator
from minigrad.dtypes import bool_, from_numpy_dtype, int32, int64, scalar_type_name
from minigrad.functional_ops import broadcast_tensors, cat, where, write_out
from minigrad.nn.ops.activation import (
    Elu, EluInplace, Gelu, GeluTanh, LeakyRelu, LeakyReluInplace, Silu, Softplus, _check_float,
)
from minigrad.nn.ops.binary_cross_entropy import BinaryCrossEntropy
from minigrad.nn.ops.conv import (
    AdaptiveMaxPool2d, Conv2d, ConvTranspose2d, MaxPool2d, adaptive_bins, adaptive_windows, pool_out_size, pool_windows,
)
from minigrad.nn.ops.ctc import CtcLoss
from minigrad.nn.ops.linear_map import (
    AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool2d, AvgPool3d, ChannelShuffle, Col2Im, ConstantPadNd, Embedding,
    Im2Col, MaxUnpool, PixelShuffle, PixelUnshuffle, ReflectionPad, ReplicationPad, UpsampleBicubic2d,
    UpsampleBicubic2dAa, UpsampleBilinear2d, UpsampleBilinear2dAa, UpsampleLanczos2dAa, UpsampleLinear1d,
    UpsampleNearest, UpsampleNearestExact, UpsampleTrilinear3d,
)
from minigrad.nn.ops.linear import Linear as FusedLinear, LinearNoBias as FusedLinearNoBias, fits_fused_linear
from minigrad.nn.ops.loss import CrossEntropy
from minigrad.nn.ops.normalization import NativeBatchNorm, NativeGroupNorm, NativeLayerNorm, batch_statistics
from minigrad.nn.ops.reduced_loss import BinaryCrossEntropyWithLogits, HuberLoss, MseLoss, NllLoss, NllLoss2d, SmoothL1Loss
from minigrad.nn.parameter import Parameter
from minigrad.ops.broadcast import integer, number
from minigrad.ops.elementwise import DivScalar
from minigrad.ops.registry import tensor_method
from minigrad.ops.softmax import LogSoftmax, Softmax
from minigrad._tensor import Tensor, _operand, check_tensor

from minigrad.nn.functional._common import _TENSORS, _TENSORS_OR_NONE, _check_tensors
from minigrad.nn.functional.activations import (
    relu, sigmoid, tanh, _softmax_dim, softmax, log_softmax, gelu, silu, leaky_relu, leaky_relu_, elu, elu_, relu_,
    softplus, _SELU_ALPHA, _SELU_SCALE, _constant, _overwrite, hardtanh, hardtanh_, relu6, selu, selu_, celu, celu_,
    mish, softsign, softmin, logsigmoid, hardsigmoid, hardswish, glu, threshold, threshold_, _shrunk, hardshrink,
    softshrink, tanhshrink, prelu, _hardshrink_method, _prelu_method, rrelu, rrelu_, gumbel_softmax,
)
from minigrad.nn.functional.dense import linear, bilinear
from minigrad.nn.functional.padding import _pad_indices, _reflect, pad, _padded
from minigrad.nn.functional.conv import (
    _CONV_LENGTH, _POOL2D_LENGTH, _POOL1D_LENGTH, _MAX_POOL1D_LENGTH, _ntuple, conv1d, conv2d, _convolution,
    _string_padding, conv_transpose1d, conv_transpose2d, _transposed_convolution, _BLOCK_LENGTH, unfold, fold,
    _block_sizes, _block_counts, _one_hot_filters, _im2col, _col2im, conv3d, _planes_convolution, conv_transpose3d,
    _planes_transposed_convolution,
)
from minigrad.nn.functional.pooling import (
    _window_sum, _pool_geometry, _single, _check_1d_pool_input, max_pool1d, max_pool2d, avg_pool1d, avg_pool2d,
    _output_sizes, _adaptive_sizes, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d,
    lp_pool1d, lp_pool2d, _lp_pool_limit, max_pool1d_with_indices, max_pool2d_with_indices,
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, _POOL3D_LENGTH, _pool3d_geometry, avg_pool3d,
    _max_over_windows, max_pool3d, max_pool3d_with_indices, _adaptive_sizes3d, adaptive_avg_pool3d, adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices, lp_pool3d, max_unpool1d, max_unpool2d, max_unpool3d, _unpool_size, _max_unpool,
)
from minigrad.nn.functional.vision import (
    pixel_shuffle, pixel_unshuffle, channel_shuffle, flatten, _UPSAMPLE_NODES, _ANTIALIASED_NODES, _TORCH_MODES,
    interpolate, _refuse_interpolation, _antialiased_weights, _antialias_filter, _nearest_sources, _cubic_sources,
    _linear_sources, upsample, upsample_nearest, upsample_bilinear, _ALIGN_CORNERS_WARNING, affine_grid,
    _unit_positions, grid_sample, _cubic_weights, _tap, _check_grid_sampler, _source_coordinates, _reflected,
)
from minigrad.nn.functional.sparse import (
    one_hot, _check_embedding_options, _renorm_rows, embedding, embedding_bag, _bag_bounds,
)
from minigrad.nn.functional.normalization import (
    layer_norm, batch_norm, group_norm, instance_norm, rms_norm, local_response_norm,
)
from minigrad.nn.functional.dropouts import (
    dropout, dropout1d, dropout2d, _check_probability, _dropout, _ALPHA_DROPOUT_ALPHA, _alpha_dropout, alpha_dropout,
    feature_alpha_dropout,
)
from minigrad.nn.functional.attention import (
    scaled_dot_product_attention, _grouped_heads, _safe_softmax, _canonical_mask, _mha_shape_check,
    _in_projection_packed, _in_projection, multi_head_attention_forward, _heads,
)
from minigrad.nn.functional.distances import normalize, _floor_value, cosine_similarity, pairwise_distance, pdist
from minigrad.nn.functional.losses import (
    _REDUCTIONS, _reduce, _check_reduction, _legacy_reduction, _warn_size_mismatch, _check_class_targets,
    _check_target_dtype, _as_rows, cross_entropy, _cross_entropy_with_probabilities, _smoothing_term, nll_loss,
    mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div, gaussian_nll_loss, _check_weight, _weighted,
    binary_cross_entropy, binary_cross_entropy_with_logits, _no_grad_for, ctc_loss, _ctc_lengths, _ctc_targets,
)
from minigrad.nn.functional.margin_losses import (
    margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss,
    _margin_rows, multi_margin_loss, multilabel_margin_loss, _check_triplet_dims, triplet_margin_loss,
    triplet_margin_with_distance_loss, poisson_nll_loss,
)

# The public functions belong to the package, as torch.nn.functional's do (its tests and repr look there)
for _name, _fn in list(globals().items()):
    if not _name.startswith("_") and (getattr(_fn, "__module__", None) or "").startswith(__name__ + "."):
        _fn.__module__ = __name__
del _name, _fn
