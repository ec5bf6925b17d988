"""Stage 05: custom Functions with ``ctx``, and the older instance-style Function.

The learner writes static-method Functions (``Exp``, ``Sigmoid``, ``MulConstant``,
``ReLU``, ``LinearFunction``, ``SinCos``, ``MaxWithMask``), then the instance-style
``StatefulSigmoid`` of MegEngine and PyTorch 0.x with a per-call helper, and plugs
``LinearFunction`` into a ``TinyMLP`` module.

Gradients are compared in float64 as vector-Jacobian products (a random upstream
gradient), against reference Functions written here. Errors that minigrad raises
for a malformed backward (wrong number of gradients, a gradient for a constant, a
gradient of the wrong shape) are caught in the probes and returned as data, so the
judges can name the mistake.

The stage is a package: ``reference.py`` holds the reference Functions; one module per part holds
the part's probes and judges (``exp_sigmoid.py``, ``mul_constant.py``, ``relu.py``, ``linear.py``,
``sin_cos.py``, ``max_with_mask.py``, ``stateful.py``, ``mlp.py``); ``probing.py`` the helpers they
share (``_version_check``, which stage 06 uses too). This module puts them together as ``STAGE``,
and every name is importable from here as before.
"""
from __future__ import annotations

from minigrad.course.checks import Check, Stage
from minigrad.course.stages.s05_custom_functions.exp_sigmoid import (
    judge_exp_sigmoid, judge_exp_sigmoid_saved, judge_own_sigmoid, probe_exp_sigmoid, probe_exp_sigmoid_saved,
    probe_own_sigmoid,
)
from minigrad.course.stages.s05_custom_functions.linear import (
    GRAD_HINT, INPUT_NAMES, PRODUCTS, REDUCTIONS, _counting_ops, judge_linear, judge_linear_skips, probe_linear,
    probe_linear_skips,
)
from minigrad.course.stages.s05_custom_functions.max_with_mask import judge_max_with_mask, probe_max_with_mask
from minigrad.course.stages.s05_custom_functions.mlp import MLP_SHAPES, judge_mlp, probe_mlp
from minigrad.course.stages.s05_custom_functions.mul_constant import judge_mul_constant, probe_mul_constant
from minigrad.course.stages.s05_custom_functions.probing import AB, F64, G, _version_check, _version_problem
from minigrad.course.stages.s05_custom_functions.reference import (
    Exp, LinearFunction, MaxWithMask, MulConstant, ReLU, Sigmoid, SinCos, StatefulSigmoid, TinyMLP, reference,
    stateful_sigmoid,
)
from minigrad.course.stages.s05_custom_functions.relu import judge_relu, probe_relu
from minigrad.course.stages.s05_custom_functions.sin_cos import judge_sin_cos, probe_sin_cos
from minigrad.course.stages.s05_custom_functions.stateful import judge_stateful, probe_stateful

# The mistakes the feedback names (issue 28), each by the name of its catalogued mutant: a phrase
# appears only for that mistake's results (tests/course/test_mutants.py: no mutant is told another's).
DIAGNOSES = {
    "gradient_for_the_constant": "must be None",
    "constant_in_save_for_backward": "keep plain values as attributes of ctx",
    "sigmoid_saves_input": "you used the input x where the output s = sigmoid(x) was needed",
    "exp_saves_input_and_recomputes_exp": "Exp saved ['input'], expected ['output']: the derivative of exp is exp itself",
    "sigmoid_calls_minigrads_sigmoid": "your Sigmoid runs minigrad's own sigmoid",
    "exp_of_the_saved_output": "exponentiated it again",
    "relu_mask_includes_zero": "use x > 0",
    "relu_mask_from_the_gradient": "not from the incoming gradient",
    "linear_computes_every_gradient": "still computed a gradient for input",
    "sin_cos_ignores_the_cos_gradient": "ignored the gradient of the second output",
    "forgot_mark_non_differentiable": "ctx.mark_non_differentiable(mask)",
    "stateful_reuses_one_instance": "Create a new StatefulSigmoid() inside stateful_sigmoid",
    "relu_clamps_the_callers_tensor": "ReLU changed its caller's x in place",
    "exp_exponentiates_its_input_in_place": "Exp changed its caller's x in place",
    "relu_keeps_its_input_as_a_ctx_attribute": "you kept it as ctx.x",
    "linear_keeps_its_inputs_as_ctx_attributes": "you kept it as ctx.input",
    "linear_computes_every_gradient_then_drops_the_unneeded": "returned None for input but still computed its gradient first",
    "linear_computes_the_bias_gradient_then_drops_it": "returned None for bias but still computed its gradient first",
    "relu_returns_a_tuple": "returned a tuple of 1 (Tensor), where one tensor was expected",
    "mlp_first_weight_is_not_a_parameter": "does not list w1",
}


STAGE = Stage(
    number="05",
    name="custom_functions",
    title="Custom Functions with ctx",
    parts={
        "exp_sigmoid": ("Exp", "Sigmoid"),
        "mul_constant": ("MulConstant",),
        "relu": ("ReLU",),
        "linear": ("LinearFunction",),
        "sin_cos": ("SinCos",),
        "max_with_mask": ("MaxWithMask",),
        "stateful": ("StatefulSigmoid", "stateful_sigmoid"),
        "mlp": ("TinyMLP",),
    },
    checks=(
        Check("exp_sigmoid", 2, "Exp and Sigmoid: values and gradients", probe_exp_sigmoid, judge_exp_sigmoid,
              part="exp_sigmoid"),
        Check("exp_sigmoid_saved", 1, "Exp and Sigmoid save their output, as their derivatives need",
              probe_exp_sigmoid_saved, judge_exp_sigmoid_saved, needs=("exp_sigmoid",), part="exp_sigmoid"),
        Check("sigmoid_own_formula", 1, "Sigmoid computes 1 / (1 + e⁻ˣ) itself, without minigrad's sigmoid",
              probe_own_sigmoid, judge_own_sigmoid, part="exp_sigmoid"),
        Check("mul_constant", 1, "MulConstant: a None gradient for the constant", probe_mul_constant,
              judge_mul_constant, part="mul_constant"),
        Check("relu_mask", 1, "ReLU: the gradient passes where x > 0", probe_relu, judge_relu, part="relu"),
        Check("linear_grads", 2, "LinearFunction: output and gradients of input, weight, bias", probe_linear,
              judge_linear, part="linear"),
        Check("linear_skips_work", 1, "LinearFunction computes only the gradients that are needed",
              probe_linear_skips, judge_linear_skips, needs=("linear_grads",), part="linear"),
        Check("sin_cos", 1, "SinCos: both outputs' gradients reach x", probe_sin_cos, judge_sin_cos, part="sin_cos"),
        Check("max_with_mask", 1, "MaxWithMask: gradient to the maxima, mask non-differentiable",
              probe_max_with_mask, judge_max_with_mask, part="max_with_mask"),
        Check("stateful_sigmoid", 2, "instance-style StatefulSigmoid, one fresh instance per call", probe_stateful,
              judge_stateful, part="stateful"),
        Check("tiny_mlp", 1, "TinyMLP runs on your LinearFunction", probe_mlp, judge_mlp,
              needs=("linear_grads", "relu_mask"),
              part="mlp"),
    ),
    reference=reference,
)
