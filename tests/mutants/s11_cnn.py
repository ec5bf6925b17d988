"""Common mistakes in stage 11, as small mutants of the solution."""
from tests.mutants import Mutant

FORWARD = '''
def conv2d_forward(x, w, b, stride, padding):
    # Return y, shape (N, O, OH, OW): y[n, o, i, j] = b[o] + sum over (c, a, b) of
    # w[o, c, a, b] * x_padded[n, c, i * stride + a, j * stride + b]. b may be None.
    k_h, k_w = w.shape[2:]
    x_padded = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    windows = sliding_window_view(x_padded, (k_h, k_w), axis=(2, 3))[:, :, ::stride, ::stride]
    y = np.tensordot(windows, w, axes=([1, 4, 5], [1, 2, 3]))  # (N, OH, OW, O)
    if b is not None:
        y = y + b
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2))
'''

BACKWARD = '''
def conv2d_backward(x, w, grad_y, stride, padding):
    # Return (grad_x, grad_w, grad_b), shaped like x, w and (O,).
    n, c, h, width = x.shape
    k_h, k_w = w.shape[2:]
    out_h, out_w = grad_y.shape[2:]
    x_padded = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    windows = sliding_window_view(x_padded, (k_h, k_w), axis=(2, 3))[:, :, ::stride, ::stride]

    grad_b = grad_y.sum(axis=(0, 2, 3))
    grad_w = np.tensordot(grad_y, windows, axes=([0, 2, 3], [0, 2, 3]))  # (O, C, KH, KW)

    grad_windows = np.tensordot(grad_y, w, axes=([1], [0]))  # (N, OH, OW, C, KH, KW)
    grad_padded = np.zeros_like(x_padded)
    for a in range(k_h):  # col2im: kernel cell (a, b) of every window, back where it was read
        for b in range(k_w):
            grad_padded[:, :, a:a + stride * out_h:stride, b:b + stride * out_w:stride] += (
                grad_windows[:, :, :, :, a, b].transpose(0, 3, 1, 2))
    grad_x = grad_padded[:, :, padding:padding + h, padding:padding + width]
    return np.ascontiguousarray(grad_x), grad_w, grad_b
'''

MODULE = '''
class Conv2dFunction(Function):
    """y = conv2d(x, w, b) by your NumPy functions; backward gives the gradients of x, w and b."""
    @staticmethod
    def forward(ctx, x, w, b, stride, padding):
        ctx.save_for_backward(x, w)
        ctx.stride, ctx.padding, ctx.has_bias = stride, padding, b is not None
        y = conv2d_forward(x.detach().numpy(), w.detach().numpy(),
                           None if b is None else b.detach().numpy(), stride, padding)
        return minigrad.from_numpy(y)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_y):
        x, w = ctx.saved_tensors
        grad_x, grad_w, grad_b = conv2d_backward(x.detach().numpy(), w.detach().numpy(),
                                                 grad_y.detach().numpy(), ctx.stride, ctx.padding)
        grad_b = minigrad.from_numpy(grad_b) if ctx.has_bias else None
        return minigrad.from_numpy(grad_x), minigrad.from_numpy(grad_w), grad_b, None, None


class Conv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__()
        # weight (out_channels, in_channels, k, k) and bias (out_channels,), uniform in ±1/sqrt(in_channels * k * k).
        self.stride, self.padding = stride, padding
        bound = 1 / math.sqrt(in_channels * kernel_size * kernel_size)
        shape = (out_channels, in_channels, kernel_size, kernel_size)
        self.weight = nn.Parameter((minigrad.rand(*shape) * 2 - 1) * bound)
        self.bias = nn.Parameter((minigrad.rand(out_channels) * 2 - 1) * bound)

    def forward(self, x):
        # Return Conv2dFunction applied to x with this layer's parameters.
        return Conv2dFunction.apply(x, self.weight, self.bias, self.stride, self.padding)
'''

CNN = '''
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        # Conv2d(1, 8, 3, padding=1), Conv2d(8, 16, 3, padding=1), nn.Linear(16 * 8 * 8, 10), in that order.
        self.conv1 = Conv2d(1, 8, 3, padding=1)
        self.conv2 = Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        # x: (N, 1, 8, 8) images. Return (N, 10) logits: conv1, ReLU, conv2, ReLU, flatten, fc.
        x = self.conv1(x).relu()
        x = self.conv2(x).relu()
        return self.fc(x.flatten(1))
'''


def _swap(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


MUTANTS = [
    Mutant(
        "padding_forgotten_in_backward",
        {"conv_backward": _swap(BACKWARD, "grad_padded[:, :, padding:padding + h, padding:padding + width]",
                                "grad_padded[:, :, :h, :width]")},
        lost={"grad_input", "function", "training"},
        feedback={"grad_input": "look at the padding"},
    ),
    Mutant(
        "stride_ignored_in_col2im",
        {"conv_backward": _swap(BACKWARD, "grad_padded[:, :, a:a + stride * out_h:stride, b:b + stride * out_w:stride]",
                                "grad_padded[:, :, a:a + out_h, b:b + out_w]")},
        lost={"grad_input", "function", "training"},
        feedback={"grad_input": "look at the stride"},
    ),
    Mutant(
        "overlapping_windows_overwritten",
        {"conv_backward": _swap(BACKWARD, "b:b + stride * out_w:stride] += (", "b:b + stride * out_w:stride] = (")},
        lost={"grad_input", "function", "training"},
        feedback={"grad_input": "your col2im assigns (=), which keeps only the last window's"},
    ),
    Mutant(  # accumulates, so it must not be told to accumulate
        "backward_scatters_with_the_flipped_kernel",
        {"conv_backward": _swap(BACKWARD, "grad_windows = np.tensordot(grad_y, w, axes",
                                "grad_windows = np.tensordot(grad_y, w[:, :, ::-1, ::-1], axes")},
        lost={"grad_input", "function", "training"},
        feedback={"grad_input": "uses the kernel flipped"},
    ),
    Mutant(  # the learner: training reached 93% on this, and must not earn the cnn part's points
        "broken_convolution_cannot_earn_the_training",
        {"conv_forward": _swap(FORWARD, "axis=(2, 3))[:, :, ::stride, ::stride]", "axis=(2, 3))"),
         "conv_backward": _swap(BACKWARD, "b:b + stride * out_w:stride] += (", "b:b + stride * out_w:stride] = (")},
        lost={"forward", "forward_contiguous", "grad_input", "function", "module", "cnn", "training"},
        feedback={"training": "not run: needs function, cnn",
                  "grad_input": "your col2im assigns (=)",  # it makes both of these mistakes too
                  "forward": "// 2 + 1"},
        diagnosis="overlapping_windows_overwritten",
    ),
    Mutant(
        "grad_w_transposed",
        {"conv_backward": _swap(BACKWARD, "grad_w = np.tensordot(grad_y, windows, axes=([0, 2, 3], [0, 2, 3]))",
                                "grad_w = np.tensordot(windows, grad_y, axes=([0, 2, 3], [0, 2, 3])).transpose(0, 3, 1, 2)")},
        lost={"grad_weight", "function", "training"},
        feedback={"grad_weight": "transposed"},
    ),
    Mutant(
        "bias_gradient_not_summed_over_batch",
        {"conv_backward": _swap(BACKWARD, "grad_b = grad_y.sum(axis=(0, 2, 3))", "grad_b = grad_y.sum(axis=(2, 3))")},
        lost={"grad_bias", "function", "training"},
        feedback={"grad_bias": "not over the batch"},
    ),
    Mutant(
        "bias_gradient_not_summed_over_space",
        {"conv_backward": _swap(BACKWARD, "grad_b = grad_y.sum(axis=(0, 2, 3))", "grad_b = grad_y.sum(axis=0)")},
        lost={"grad_bias", "function", "training"},
        feedback={"grad_bias": "not over space"},
    ),
    Mutant(
        "forward_flips_the_kernel",
        {"conv_forward": _swap(FORWARD, "y = np.tensordot(windows, w, axes", "y = np.tensordot(windows, w[:, :, ::-1, ::-1], axes")},
        lost={"forward", "forward_contiguous", "function", "module", "cnn", "training"},
        feedback={"forward": "flips the kernel"},
    ),
    Mutant(
        "forward_returns_a_transposed_view",
        {"conv_forward": _swap(FORWARD, "return np.ascontiguousarray(y.transpose(0, 3, 1, 2))",
                               "return y.transpose(0, 3, 1, 2)")},
        lost={"forward_contiguous"},
        feedback={"forward_contiguous": "return np.ascontiguousarray(...)"},
    ),
    Mutant(
        "forward_ignores_the_stride",
        {"conv_forward": _swap(FORWARD, "axis=(2, 3))[:, :, ::stride, ::stride]", "axis=(2, 3))")},
        lost={"forward", "forward_contiguous", "function", "module", "cnn", "training"},
        feedback={"forward": "// 2 + 1"},
    ),
    Mutant(
        "gradient_for_a_missing_bias",
        {"conv_module": _swap(MODULE, "grad_b = minigrad.from_numpy(grad_b) if ctx.has_bias else None",
                              "grad_b = minigrad.from_numpy(grad_b)")},
        lost={"function", "training"},
        feedback={"function": "backward's third gradient must be None"},
    ),
    Mutant(
        "function_keeps_arrays_on_ctx",
        {"conv_module": _swap(_swap(MODULE, "        ctx.save_for_backward(x, w)\n",
                                    "        ctx.x, ctx.w = x.detach(), w.detach()\n"),
                              "        x, w = ctx.saved_tensors\n", "        x, w = ctx.x, ctx.w\n")},
        lost={"function", "training"},
        feedback={"function": "save x and w, ctx.save_for_backward(x, w)"},
    ),
    Mutant(
        "conv_init_with_in_channels_only",
        {"conv_module": _swap(MODULE, "bound = 1 / math.sqrt(in_channels * kernel_size * kernel_size)",
                              "bound = 1 / math.sqrt(in_channels)")},
        lost={"module", "cnn", "training"},
        feedback={"module": "fan_in = in_channels · k · k"},
    ),
    Mutant(
        "cnn_with_minigrads_conv",
        {"cnn": _swap(_swap(CNN, "self.conv1 = Conv2d(1, 8, 3, padding=1)", "self.conv1 = nn.Conv2d(1, 8, 3, padding=1)"),
                      "self.conv2 = Conv2d(8, 16, 3, padding=1)", "self.conv2 = nn.Conv2d(8, 16, 3, padding=1)")},
        lost={"cnn", "training"},
        feedback={"cnn": "use your Conv2d layers"},
    ),
    # -- what the worksheet says, checked (issue 28) ----------------------------------------------
    Mutant(
        "cnn_without_relu",
        {"cnn": _swap(_swap(CNN, "x = self.conv1(x).relu()", "x = self.conv1(x)"),
                      "x = self.conv2(x).relu()", "x = self.conv2(x)")},
        lost={"cnn", "training"},
        feedback={"cnn": "has no ReLU at all"},
    ),
    Mutant(
        "cnn_without_the_second_relu",
        {"cnn": _swap(CNN, "x = self.conv2(x).relu()", "x = self.conv2(x)")},
        lost={"cnn", "training"},
        feedback={"cnn": "has no ReLU after conv2"},
    ),
]
