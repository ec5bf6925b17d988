"""Common mistakes in stage 07, as small mutants of the solution."""
from tests.mutants import Mutant

SIGMOID = '''
@numba.njit
def sigmoid_forward_kernel(x, out):
    # For flat 1-D arrays: out[i] = 1 / (1 + exp(-x[i])).
    for i in range(x.size):
        out[i] = 1.0 / (1.0 + math.exp(-x[i]))


@numba.njit
def sigmoid_backward_kernel(y, grad, out):
    # For flat 1-D arrays: out[i] = grad[i] * y[i] * (1 - y[i]).
    for i in range(y.size):
        out[i] = grad[i] * y[i] * (1.0 - y[i])


def sigmoid_forward(x):
    # Return sigmoid(x): a new array with x's shape and dtype.
    x = np.ascontiguousarray(x)  # a copy only if x is a transposed or sliced view
    out = np.empty_like(x)
    sigmoid_forward_kernel(x.reshape(-1), out.reshape(-1))  # reshape of a contiguous array: a view
    return out


def sigmoid_backward(y, grad):
    # Return grad * y * (1 - y): a new array with y's shape and dtype.
    y, grad = np.ascontiguousarray(y), np.ascontiguousarray(grad)
    out = np.empty_like(y)
    sigmoid_backward_kernel(y.reshape(-1), grad.reshape(-1), out.reshape(-1))
    return out
'''

CROSS_ENTROPY = '''
@numba.njit(parallel=True)
def cross_entropy_forward_kernel(logits, targets, log_probs):
    # For C-contiguous (N, C) logits: fill log_probs[r] with log_softmax(logits[r]) and
    # return the mean over the rows of -log_probs[r, targets[r]].
    n, c = logits.shape
    total = 0.0  # a scalar reduction: each thread sums its own rows, Numba adds the parts
    for r in prange(n):
        m = logits[r, 0]
        for j in range(1, c):
            if logits[r, j] > m:
                m = logits[r, j]
        s = 0.0
        for j in range(c):
            s += math.exp(logits[r, j] - m)  # every exponent <= 0: no overflow
        log_s = math.log(s)
        for j in range(c):
            log_probs[r, j] = (logits[r, j] - m) - log_s
        total -= log_probs[r, targets[r]]
    return total / n


@numba.njit
def cross_entropy_backward_kernel(log_probs, targets, scale, out):
    # out[r, j] = (exp(log_probs[r, j]) - (1 if j == targets[r] else 0)) * scale
    for r in range(log_probs.shape[0]):
        for j in range(log_probs.shape[1]):
            out[r, j] = math.exp(log_probs[r, j]) * scale
        out[r, targets[r]] -= scale


def cross_entropy_forward(logits, targets):
    # Return (loss, log_probs): the mean loss as a Python float, and an array with logits' shape and dtype.
    logits = np.ascontiguousarray(logits)
    targets = np.ascontiguousarray(targets, dtype=np.int64)
    log_probs = np.empty_like(logits)
    loss = cross_entropy_forward_kernel(logits, targets, log_probs)
    return float(loss), log_probs


def cross_entropy_backward(log_probs, targets, grad_scalar):
    # Return the gradient of grad_scalar * loss with respect to the logits: log_probs' shape and dtype.
    log_probs = np.ascontiguousarray(log_probs)
    targets = np.ascontiguousarray(targets, dtype=np.int64)
    out = np.empty_like(log_probs)
    cross_entropy_backward_kernel(log_probs, targets, grad_scalar / log_probs.shape[0], out)
    return out
'''

FUNCTIONS = '''
class Sigmoid(Function):
    """sigmoid(x) by your kernels: forward(ctx, x) and backward(ctx, grad_output), backward once-differentiable."""
    @staticmethod
    def forward(ctx, x):
        y = minigrad.from_numpy(sigmoid_forward(x.detach().numpy()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return minigrad.from_numpy(sigmoid_backward(y.detach().numpy(), grad_output.detach().numpy()))


class CrossEntropy(Function):
    """The mean cross-entropy of (N, C) logits and (N,) int64 targets, a 0-d tensor, by your kernels."""
    @staticmethod
    def forward(ctx, logits, targets):
        loss, log_probs = cross_entropy_forward(logits.detach().numpy(), targets.numpy())
        ctx.log_probs, ctx.targets = log_probs, targets.numpy()  # arrays, not tensors: plain attributes
        return minigrad.tensor(loss, dtype=logits.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        grad = cross_entropy_backward(ctx.log_probs, ctx.targets, grad_output.item())
        return minigrad.from_numpy(grad), None  # no gradient for the integer targets
'''


def _swap(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


MUTANTS = [
    Mutant(
        "race_on_a_shared_accumulator",
        {"cross_entropy": _swap(_swap(CROSS_ENTROPY, "    total = 0.0  # a scalar reduction", "    total = np.zeros(1)  #"),
                                "        total -= log_probs[r, targets[r]]\n    return total / n",
                                "        total[0] -= log_probs[r, targets[r]]\n    return total[0] / n")},
        lost={"ce_no_race"},
        feedback={"ce_no_race": "writes total[...] inside a prange loop"},
    ),
    Mutant(
        "no_max_subtraction",
        {"cross_entropy": _swap(_swap(CROSS_ENTROPY, "s += math.exp(logits[r, j] - m)", "s += math.exp(logits[r, j])"),
                                "log_probs[r, j] = (logits[r, j] - m) - log_s", "log_probs[r, j] = logits[r, j] - log_s")},
        lost={"ce_stable"},
        feedback={"ce_stable": "exp(1000) overflows"},
    ),
    Mutant(
        "log_of_a_rounded_probability",
        {"cross_entropy": _swap(CROSS_ENTROPY, "log_probs[r, j] = (logits[r, j] - m) - log_s",
                                "log_probs[r, j] = math.log(math.exp(logits[r, j] - m) / s)")},
        lost={"ce_stable"},
        feedback={"ce_stable": "log(0) = -inf"},
    ),
    Mutant(
        "backward_without_mean",
        {"cross_entropy": _swap(CROSS_ENTROPY, "grad_scalar / log_probs.shape[0], out)", "grad_scalar, out)")},
        lost={"ce_backward", "ce_function", "once_differentiable"},
        feedback={"ce_backward": "times too large"},
    ),
    Mutant(
        "backward_ignores_grad_scalar",
        {"cross_entropy": _swap(CROSS_ENTROPY, "grad_scalar / log_probs.shape[0], out)", "1.0 / log_probs.shape[0], out)")},
        lost={"ce_backward", "ce_function", "once_differentiable"},
        feedback={"ce_backward": "ignores grad_scalar"},
    ),
    Mutant(
        "backward_writes_into_grad",
        {"sigmoid": _swap(_swap(SIGMOID, "    out = np.empty_like(y)\n    sigmoid_backward_kernel(y.reshape(-1), grad.reshape(-1), out.reshape(-1))\n    return out",
                                "    sigmoid_backward_kernel(y.reshape(-1), grad.reshape(-1), grad.reshape(-1))\n    return grad"),
                          "y, grad = np.ascontiguousarray(y), np.ascontiguousarray(grad)", "y, grad = np.ascontiguousarray(y), np.ascontiguousarray(grad)")},
        lost={"sigmoid_backward", "sigmoid_speed", "sigmoid_function", "once_differentiable"},
        feedback={"sigmoid_backward": "changed its input `grad`"},
    ),
    Mutant(
        "kernels_not_compiled_overflow_guarded",
        {"sigmoid": _swap(SIGMOID.replace("@numba.njit\n", ""), "math.exp(-x[i])", "math.exp(min(-x[i], 700.0))")},
        lost={"sigmoid_compiled", "sigmoid_speed"},
        feedback={"sigmoid_compiled": "sigmoid_forward: this function is not compiled: add @numba.njit"},
        diagnosis="kernels_not_compiled",
    ),
    Mutant(
        "kernels_not_compiled",
        {"sigmoid": SIGMOID.replace("@numba.njit\n", "")},
        lost={"sigmoid_forward", "sigmoid_compiled", "sigmoid_speed", "sigmoid_function", "once_differentiable"},
        feedback={"sigmoid_forward": "raised OverflowError on values of 40 and -800 (float64): this function is not "
                                     "compiled: add @numba.njit",
                  "sigmoid_compiled": "not compiled: add @numba.njit"},
    ),
    Mutant(
        "slow_compiled_backward",
        {"sigmoid": _swap(SIGMOID, "out[i] = grad[i] * y[i] * (1.0 - y[i])",
                          "out[i] = grad[i] * math.exp(math.log(y[i])) * math.exp(math.log(1.0 - y[i]))")},
        lost={"sigmoid_speed"},
        feedback={"sigmoid_speed": "NumPy's time / yours ="},
    ),
    Mutant(
        "float64_for_float32",
        {"sigmoid": _swap(SIGMOID, "    out = np.empty_like(x)\n", "    out = np.empty(x.shape)\n")},
        lost={"sigmoid_forward", "sigmoid_function", "once_differentiable"},
        feedback={"sigmoid_forward": "returned float64 on shape (7,) (float32), expected float32"},
    ),
    Mutant(
        "flat_loop_without_a_contiguous_copy",
        {"sigmoid": _swap(SIGMOID, "    x = np.ascontiguousarray(x)  # a copy only if x is a transposed or sliced view\n", "")},
        lost={"sigmoid_forward", "sigmoid_function", "once_differentiable"},
        feedback={"sigmoid_forward": "np.ascontiguousarray"},
    ),
    Mutant(
        "not_once_differentiable",
        {"functions": FUNCTIONS.replace("    @once_differentiable\n", "")},
        lost={"once_differentiable"},
        feedback={"once_differentiable": "@once_differentiable under @staticmethod"},
    ),
    Mutant(
        "function_ignores_grad_output",
        {"functions": _swap(FUNCTIONS, "grad_output.item())", "1.0)")},
        lost={"ce_function", "once_differentiable"},
        feedback={"ce_function": "2.5 times too small"},
    ),
    # -- the max-shift of log_softmax, found by mutation testing (issue 28) --------------------------
    Mutant(
        "max_loop_misses_the_last_column",
        {"cross_entropy": _swap(CROSS_ENTROPY, "for j in range(1, c):", "for j in range(1, c - 1):")},
        lost={"ce_stable"},
        feedback={"ce_stable": "m is too small (a column missed)"},
    ),
    Mutant(
        "max_loop_reads_past_the_row",
        {"cross_entropy": _swap(CROSS_ENTROPY, "for j in range(1, c):", "for j in range(1, c + 1):")},
        lost={"ce_stable"},
        feedback={"ce_stable": "it was read from outside the row"},
    ),
]
