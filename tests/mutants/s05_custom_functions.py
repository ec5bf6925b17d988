"""Common mistakes in stage 05, as small edits of the solution's cells."""
from pathlib import Path

from minigrad.course.program import load_notebook, solution_sources
from tests.mutants import Mutant

SOLUTION = solution_sources(
    load_notebook(Path(__file__).resolve().parents[2] / "solutions" / "05_custom_functions.ipynb"))


def edit(grade_id: str, old: str, new: str) -> dict[str, str]:
    """The solution's cell ``grade_id`` with ``old`` replaced by ``new`` (which must be there)."""
    source = SOLUTION[grade_id]
    assert old in source, f"{grade_id}: {old!r} is not in the solution any more; update this mutant"
    return {grade_id: source.replace(old, new)}


MUTANTS = [
    Mutant(
        "constant_without_none",
        edit("mul_constant", "return grad_output * ctx.c, None", "return grad_output * ctx.c"),
        lost={"mul_constant"},
        feedback={"mul_constant": "returned 1 gradient(s), but forward took 2 arguments"},
    ),
    Mutant(
        "gradient_for_the_constant",
        edit("mul_constant", "return grad_output * ctx.c, None", "return grad_output * ctx.c, grad_output.sum()"),
        lost={"mul_constant"},
        feedback={"mul_constant": "must be None"},
    ),
    Mutant(
        "constant_in_save_for_backward",
        edit("mul_constant", "ctx.c = c", "ctx.save_for_backward(x, c); ctx.c = c"),
        lost={"mul_constant"},
        feedback={"mul_constant": "keep plain values as attributes of ctx"},
    ),
    Mutant(
        "sigmoid_saves_input",
        edit("exp_sigmoid", "        s = 1 / (1 + (-x).exp())\n        ctx.save_for_backward(s)\n        return s",
             "        ctx.save_for_backward(x)\n        return 1 / (1 + (-x).exp())"),
        lost={"exp_sigmoid", "exp_sigmoid_saved"},
        feedback={"exp_sigmoid": "you used the input x where the output s = sigmoid(x) was needed"},
    ),
    Mutant(  # the same words as stage 03's mutant for this mistake
        "exp_saves_input_and_recomputes_exp",
        {"exp_sigmoid": edit("exp_sigmoid", "        y = x.exp()\n        ctx.save_for_backward(y)\n        return y",
                             "        ctx.save_for_backward(x)\n        return x.exp()")["exp_sigmoid"].replace(
            "        y, = ctx.saved_tensors\n        return grad_output * y\n",
            "        x, = ctx.saved_tensors\n        return grad_output * x.exp()\n")},
        lost={"exp_sigmoid_saved"},
        feedback={"exp_sigmoid_saved": "Exp saved ['input'], expected ['output']: the derivative of exp is exp itself"},
    ),
    Mutant(  # minigrad's own Exp and Sigmoid, found by walking its modules: flagged for review
        "borrows_minigrads_functions_dynamically",
        {"exp_sigmoid": "import importlib, pkgutil\nimport minigrad.ops as _ops\n\n_found = {}\n"
                        "for _info in pkgutil.walk_packages(_ops.__path__, _ops.__name__ + '.'):\n"
                        "    _module = importlib.import_module(_info.name)\n"
                        "    for _name in ('Exp', 'Sigmoid'):\n"
                        "        if isinstance(getattr(_module, _name, None), type):\n"
                        "            _found[_name] = getattr(_module, _name)\n"
                        "globals().update(_found)\n"},
        lost={"sigmoid_own_formula"},
        feedback={"sigmoid_own_formula": "your Sigmoid runs minigrad's own sigmoid"},
        borrowed={"exp_sigmoid": ("Exp", "Sigmoid")},
        diagnosis="sigmoid_calls_minigrads_sigmoid",
    ),
    Mutant(  # a subclass with nothing of its own is minigrad's code too
        "subclasses_minigrads_exp",
        {"exp_sigmoid": SOLUTION["exp_sigmoid"].split("class Sigmoid")[0].replace(
            "class Exp(Function):", "class _Unused(Function):")
         + "from minigrad.ops.elementwise import Exp as _TheirExp\n\n\nclass Exp(_TheirExp):\n    pass\n\n\n"
         + "class Sigmoid" + SOLUTION["exp_sigmoid"].split("class Sigmoid")[1]},
        lost=set(),
        borrowed={"exp_sigmoid": ("Exp",)},
    ),
    Mutant(
        "sigmoid_calls_minigrads_sigmoid",
        edit("exp_sigmoid", "s = 1 / (1 + (-x).exp())", "s = x.sigmoid()"),
        lost={"sigmoid_own_formula"},
        feedback={"sigmoid_own_formula": "your Sigmoid runs minigrad's own sigmoid"},
    ),
    Mutant(
        "exp_of_the_saved_output",
        edit("exp_sigmoid", "return grad_output * y", "return grad_output * y.exp()"),
        lost={"exp_sigmoid", "exp_sigmoid_saved"},
        feedback={"exp_sigmoid": "exponentiated it again"},
    ),
    Mutant(
        "relu_mask_includes_zero",
        edit("relu", "return grad_output * (x > 0)", "return grad_output * (x >= 0)"),
        lost={"relu_mask", "tiny_mlp"},
        feedback={"relu_mask": "use x > 0"},
    ),
    Mutant(
        "relu_mask_from_the_gradient",
        edit("relu", "return grad_output * (x > 0)", "return grad_output * (grad_output > 0)"),
        lost={"relu_mask", "tiny_mlp"},
        feedback={"relu_mask": "not from the incoming gradient"},
    ),
    Mutant(
        "linear_weight_gradient_transposed",
        edit("linear", "grad_weight = grad_output.T @ input", "grad_weight = input.T @ grad_output"),
        lost={"linear_grads", "linear_skips_work", "tiny_mlp"},
        feedback={"linear_grads": "your gradient for weight has shape [3, 4], expected [4, 3]"},
    ),
    Mutant(
        "linear_computes_every_gradient",
        edit("linear", "        if ctx.needs_input_grad[0]:\n            grad_input",
             "        if True:\n            grad_input"),
        lost={"linear_skips_work"},
        feedback={"linear_skips_work": "still computed a gradient for input"},
    ),
    Mutant(
        "sin_cos_ignores_the_cos_gradient",
        edit("sin_cos", "return grad_sin * c - grad_cos * s", "return grad_sin * c"),
        lost={"sin_cos"},
        feedback={"sin_cos": "ignored the gradient of the second output"},
    ),
    Mutant(
        "forgot_mark_non_differentiable",
        edit("max_with_mask", "        ctx.mark_non_differentiable(mask)\n", ""),
        lost={"max_with_mask"},
        feedback={"max_with_mask": "ctx.mark_non_differentiable(mask)"},
    ),
    Mutant(
        "stateful_reuses_one_instance",
        edit("stateful", "    return StatefulSigmoid()(x)",
             "    global _shared\n    _shared = globals().get('_shared') or StatefulSigmoid()\n    return _shared(x)"),
        lost={"stateful_sigmoid"},
        feedback={"stateful_sigmoid": "Create a new StatefulSigmoid() inside stateful_sigmoid"},
    ),
    # -- what the worksheet says, checked (issue 28) ----------------------------------------------
    Mutant(
        "relu_clamps_the_callers_tensor",
        edit("relu", "        ctx.save_for_backward(x)\n        return x * (x > 0)",
             "        ctx.save_for_backward(x)\n        return x.clamp_(min=0)"),
        lost={"relu_mask", "tiny_mlp"},
        feedback={"relu_mask": "ReLU changed its caller's x in place"},
    ),
    Mutant(
        "exp_exponentiates_its_input_in_place",
        {"exp_sigmoid": edit("exp_sigmoid", "        y = x.exp()\n        ctx.save_for_backward(y)\n        return y",
                             "        ctx.save_for_backward(x)\n        return x.exp_()")["exp_sigmoid"].replace(
            "        y, = ctx.saved_tensors\n        return grad_output * y\n",
            "        x, = ctx.saved_tensors\n        return grad_output * x.exp()\n")},
        lost={"exp_sigmoid", "exp_sigmoid_saved"},
        feedback={"exp_sigmoid": "Exp changed its caller's x in place"},
    ),
    Mutant(
        "relu_keeps_its_input_as_a_ctx_attribute",
        {"relu": edit("relu", "ctx.save_for_backward(x)", "ctx.x = x")["relu"].replace(
            "x, = ctx.saved_tensors", "x = ctx.x")},
        lost={"relu_mask", "tiny_mlp"},
        feedback={"relu_mask": "you kept it as ctx.x"},
    ),
    Mutant(
        "linear_keeps_its_inputs_as_ctx_attributes",
        {"linear": edit("linear", "ctx.save_for_backward(input, weight)", "ctx.input, ctx.weight = input, weight")[
            "linear"].replace("input, weight = ctx.saved_tensors", "input, weight = ctx.input, ctx.weight")},
        lost={"linear_grads", "linear_skips_work", "tiny_mlp"},
        feedback={"linear_grads": "you kept it as ctx.input"},
    ),
    Mutant(
        "linear_computes_every_gradient_then_drops_the_unneeded",
        edit("linear", """        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.T @ input
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias""", """        grad_input, grad_weight = grad_output @ weight, grad_output.T @ input
        grad_bias = grad_output.sum(0) if ctx.has_bias else None
        need = ctx.needs_input_grad
        return grad_input if need[0] else None, grad_weight if need[1] else None, grad_bias if need[2] else None"""),
        lost={"linear_skips_work"},
        feedback={"linear_skips_work": "returned None for input but still computed its gradient first"},
    ),
    Mutant(
        "linear_computes_the_bias_gradient_then_drops_it",
        edit("linear", "        if ctx.has_bias and ctx.needs_input_grad[2]:\n            grad_bias = grad_output.sum(0)",
             "        if ctx.has_bias:\n            grad_bias = grad_output.sum(0)\n"
             "        if not ctx.needs_input_grad[2]:\n            grad_bias = None"),
        lost={"linear_skips_work"},
        feedback={"linear_skips_work": "returned None for bias but still computed its gradient first"},
    ),
    Mutant(
        "relu_returns_a_tuple",
        edit("relu", "return x * (x > 0)", "return (x * (x > 0),)"),
        lost={"relu_mask", "tiny_mlp"},
        feedback={"relu_mask": "returned a tuple of 1 (Tensor), where one tensor was expected"},
    ),
    Mutant(
        "mlp_first_weight_is_not_a_parameter",
        edit("mlp", "self.w1 = nn.Parameter(minigrad.randn(n_hidden, n_in) * n_in ** -0.5)",
             "self.w1 = minigrad.randn(n_hidden, n_in) * n_in ** -0.5"),
        lost={"tiny_mlp"},
        feedback={"tiny_mlp": "does not list w1"},
    ),
    Mutant(  # found by mutation testing (issue 28): invisible while the probe set its own weights
        "mlp_weight_transposed",
        edit("mlp", "self.w1 = nn.Parameter(minigrad.randn(n_hidden, n_in) * n_in ** -0.5)",
             "self.w1 = nn.Parameter(minigrad.randn(n_in, n_hidden) * n_in ** -0.5)"),
        lost={"tiny_mlp"},
        feedback={"tiny_mlp": "starts w1 with shape (64, 128), expected (128, 64)"},
    ),
    Mutant(
        "mlp_second_weight_scaled_by_n_in",
        edit("mlp", "self.w2 = nn.Parameter(minigrad.randn(n_out, n_hidden) * n_hidden ** -0.5)",
             "self.w2 = nn.Parameter(minigrad.randn(n_out, n_hidden) * n_in ** -0.5)"),
        lost={"tiny_mlp"},
        feedback={"tiny_mlp": "expected about 0.0884: randn(...) * 128 ** -0.5"},
    ),
    Mutant(
        "relu_mask_shifted",
        edit("relu", "return x * (x > 0)", "return x * (x > 1)"),
        lost={"relu_mask", "tiny_mlp"},
        feedback={"relu_mask": "ReLU.apply(x) with x ="},
    ),
]
