"""Common mistakes in stage 03, as small mutants of the solution."""
from tests.mutants import Mutant

CONTEXT = '''
class Context:
    def __init__(self, needs_input_grad=()):
        self.needs_input_grad = tuple(needs_input_grad)
        self.saved, self.versions, self.released = (), (), False

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, minigrad.Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self.saved = tensors
        self.versions = tuple(None if t is None else t._version for t in tensors)

    @property
    def saved_tensors(self):
        if self.released:
            raise RuntimeError("Trying to backward through the graph a second time. "
                               "Specify retain_graph=True if you need to backward through the graph a second time.")
        for i, (t, version) in enumerate(zip(self.saved, self.versions)):
            if t is not None and t._version != version:
                raise RuntimeError(f"one of the variables needed for gradient computation has been modified by "
                                   f"an inplace operation: saved tensor {i} is at version {t._version}; "
                                   f"expected version {version} instead")
        return self.saved

    def release(self):
        self.saved, self.versions, self.released = (), (), True
'''

FUNCTIONS = '''
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * y


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.log()

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / x


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.sigmoid()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * y * (1 - y)


class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.tanh()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * (1 - y * y)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        return grad * b if need_a else None, grad * a if need_b else None
'''

SAVED_BYTES = '''
def saved_bytes(output):
    if output.grad_fn is None:
        return 0
    counted, total = set(), 0
    for node in engine.topological_order([output.grad_fn]):
        for t in getattr(node, "saved_tensors", ()):
            if t is None:
                continue
            array = t.detach().numpy()
            if id(array) not in counted:
                counted.add(id(array))
                total += array.nbytes
    return total
'''


def _replace(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


MUTANTS = [
    Mutant(
        "no_version_check",
        {"context": _replace(CONTEXT, "if t is not None and t._version != version:", "if False:")},
        lost={"context_version"},
        feedback={"context_version": "record each tensor's _version"},
    ),
    Mutant(
        "version_recorded_at_first_read",
        {"context": _replace(_replace(
            CONTEXT,
            "        self.versions = tuple(None if t is None else t._version for t in tensors)\n",
            "        self.versions = None\n"),
            "        for i, (t, version) in enumerate(",
            "        if self.versions is None:\n"
            "            self.versions = tuple(None if t is None else t._version for t in self.saved)\n"
            "        for i, (t, version) in enumerate(")},
        lost={"context_version"},
        feedback={"context_version": "returned it without complaint"},
        diagnosis="no_version_check",
    ),
    Mutant(
        "compares_with_version_zero",
        {"context": _replace(CONTEXT, "t._version != version:", "t._version != 0:")},
        lost={"context_version"},
        feedback={"context_version": "not with 0"},
    ),
    Mutant(
        "error_without_versions",
        {"context": _replace(
            CONTEXT,
            'f"an inplace operation: saved tensor {i} is at version {t._version}; "\n'
            '                                   f"expected version {version} instead"',
            '"an inplace operation"')},
        lost={"context_version"},
        feedback={"context_version": "name both versions"},
    ),
    Mutant(
        "saves_copies",
        {"context": _replace(CONTEXT, "self.saved = tensors",
                             "self.saved = tuple(None if t is None else t.clone() for t in tensors)")},
        lost={"context_saves", "context_version", "context_release", "context_drives_backward"},
        feedback={"context_saves": "but a copy"},
    ),
    Mutant(
        "no_type_check",
        {"context": _replace(CONTEXT, "if t is not None and not isinstance(t, minigrad.Tensor):", "if False:")},
        lost={"context_type_error"},
        feedback={"context_type_error": "raise TypeError for anything"},
    ),
    Mutant(
        "type_error_without_details",
        {"context": _replace(
            CONTEXT,
            'raise TypeError(f"save_for_backward can only save variables, but argument {i} "\n'
            '                                f"is of type {type(t).__name__}")',
            'raise TypeError("save_for_backward can only save tensors")')},
        lost={"context_type_error"},
        feedback={"context_type_error": "say which argument and its type"},
    ),
    Mutant(
        "release_does_nothing",
        {"context": _replace(CONTEXT, "        self.saved, self.versions, self.released = (), (), True",
                             "        pass")},
        lost={"context_release"},
        feedback={"context_release": "still answered"},
    ),
    Mutant(
        "release_keeps_the_tensors",
        {"context": _replace(CONTEXT, "        self.saved, self.versions, self.released = (), (), True",
                             "        self.released = True")},
        lost={"context_release"},
        feedback={"context_release": "your Context still holds it"},
    ),
    Mutant(
        "exp_saves_its_input",
        {"functions": _replace(_replace(
            FUNCTIONS, "        y = x.exp()\n        ctx.save_for_backward(y)\n        return y",
            "        ctx.save_for_backward(x)\n        return x.exp()"),
            "        y, = ctx.saved_tensors\n        return grad * y\n",
            "        x, = ctx.saved_tensors\n        return grad * x.exp()\n")},
        lost={"functions_saved"},
        feedback={"functions_saved": "Exp saved ['input'], expected ['output']: the derivative of exp is exp itself"},
    ),
    Mutant(
        "log_saves_its_output",
        {"functions": _replace(_replace(
            FUNCTIONS, "        ctx.save_for_backward(x)\n        return x.log()",
            "        y = x.log()\n        ctx.save_for_backward(y)\n        return y"),
            "        x, = ctx.saved_tensors\n        return grad / x",
            "        y, = ctx.saved_tensors\n        return grad / y.exp()")},
        lost={"functions_saved"},
        feedback={"functions_saved": "needs the input x"},
    ),
    Mutant(
        "sigmoid_saves_a_copy",
        {"functions": _replace(FUNCTIONS, "        y = x.sigmoid()\n        ctx.save_for_backward(y)",
                               "        y = x.sigmoid()\n        ctx.save_for_backward(y.clone())")},
        lost={"functions_saved"},
        feedback={"functions_saved": "neither an input nor the output"},
    ),
    Mutant(
        "mul_swaps_the_gradients",
        {"functions": _replace(FUNCTIONS, "return grad * b if need_a else None, grad * a if need_b else None",
                               "return grad * a if need_a else None, grad * b if need_b else None")},
        lost={"functions_gradients", "functions_saved"},
        feedback={"functions_gradients": "Mul's backward"},
    ),
    Mutant(
        "tanh_derivative_with_plus",
        {"functions": _replace(FUNCTIONS, "return grad * (1 - y * y)", "return grad * (1 + y * y)")},
        lost={"functions_gradients", "functions_saved"},
        feedback={"functions_gradients": "1 - y**2"},
    ),
    Mutant(
        "counts_shared_arrays_twice",
        {"saved_bytes": _replace(SAVED_BYTES, "            if id(array) not in counted:\n"
                                              "                counted.add(id(array))\n"
                                              "                total += array.nbytes",
                                 "            total += array.nbytes")},
        lost={"saved_bytes_counts"},
        feedback={"saved_bytes_counts": "Count each array once"},
    ),
    Mutant(
        "assumes_8_bytes_per_element",
        {"saved_bytes": _replace(SAVED_BYTES, "total += array.nbytes", "total += 8 * array.size")},
        lost={"saved_bytes_counts"},
        feedback={"saved_bytes_counts": "4 bytes, not 8"},
    ),
    Mutant(  # found by mutation testing (issue 28): the forward wrote e**x into the caller's tensor
        "exp_forward_in_place",
        {"functions": _replace(FUNCTIONS, "        y = x.exp()\n", "        y = x.exp_()\n")},
        lost={"functions_gradients", "functions_saved"},
        feedback={"functions_gradients": "changed its input x"},
    ),
]
