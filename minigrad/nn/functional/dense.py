"""Linear functions: ``linear`` (one fused node, PyTorch's ``AddmmBackward0``, from
``minigrad/nn/ops/linear.py``) and ``bilinear``.
"""
from __future__ import annotations

from minigrad.nn.ops.linear import fits_fused_linear, fused_linear
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _TENSORS_OR_NONE, _check_tensors


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: weight is (out_features, in_features), as in PyTorch."""
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("linear", input=input, weight=weight, bias=bias)
    if bias is not None and bias._data.dtype != weight._data.dtype:
        raise RuntimeError(
            f"linear: bias is {bias.dtype} but weight is {weight.dtype}; they must have the same dtype "
            "(PyTorch: 'self and mat2 must have the same dtype'). Convert one with .to(dtype)"
        )
    if fits_fused_linear(input, weight, bias):
        return fused_linear(input, weight, bias)
    if bias is not None and input.ndim != 2 and input.ndim > 0 and weight.ndim == 2:
        # PyTorch: the rows as one matrix (addmm), viewed back to the input's leading dimensions
        return linear(input.reshape(-1, input.shape[-1]), weight, bias).reshape(*input.shape[:-1], weight.shape[0])
    out = input @ weight.T
    return out if bias is None else out + bias


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y_o = input1^T weight[o] input2 + bias_o over the last dimensions; the leading ones must match.

    weight is (out, in1, in2): one matrix per output unit. Computed as one matrix product of input1
    with all the matrices, then a product with input2 summed over in2.
    """
    if (type(input1) not in _TENSORS or type(input2) not in _TENSORS or type(weight) not in _TENSORS
            or type(bias) not in _TENSORS_OR_NONE):
        _check_tensors("bilinear", input1=input1, input2=input2, weight=weight, bias=bias)
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for dim in range(input1.ndim - 1):
        if input1.shape[dim] != input2.shape[dim]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {dim}: got "
                               f"{input1.shape[dim]} and {input2.shape[dim]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out_features, in1_features, in2_features), but got "
                           f"{weight.ndim}-D")
    out_features, in1, in2 = weight.shape
    for name, size, expected in (("input1", input1.shape[-1], in1), ("input2", input2.shape[-1], in2)):
        if size != expected:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {size} but expected "
                               f"{expected}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_features):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but expected "
                           f"{out_features}")
    dtypes = {t._data.dtype for t in (input1, input2, weight)}
    if len(dtypes) > 1:
        raise RuntimeError(f"bilinear(): all tensors must have the same dtype, got input1: {input1.dtype}, "
                           f"input2: {input2.dtype}, weight: {weight.dtype}; convert them with .to(dtype)")
    # (..., in1) @ (in1, out * in2) -> (..., out, in2), then times input2 summed over in2
    left = (input1 @ weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    out = (left.reshape(*input1.shape[:-1], out_features, in2) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias
