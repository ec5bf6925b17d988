"""Common mistakes in stage 09, as small edits of the solution's cells."""
from pathlib import Path

from minigrad.course.program import load_notebook, solution_sources
from tests.mutants import Mutant

SOLUTION = solution_sources(
    load_notebook(Path(__file__).resolve().parents[2] / "solutions" / "09_higher_order.ipynb"))


def edit(grade_id: str, old: str, new: str) -> dict[str, str]:
    """The solution's cell ``grade_id`` with ``old`` replaced by ``new`` (which must be there)."""
    source = SOLUTION[grade_id]
    assert old in source, f"{grade_id}: {old!r} is not in the solution any more; update this mutant"
    return {grade_id: source.replace(old, new)}


AFTER_HVP = {"hvp_quadratic", "hvp_rosenbrock", "hvp_two_passes", "hessian", "hessian_columns", "newton_quadratic",
             "newton_rosenbrock"}

MUTANTS = [
    Mutant(
        "forgot_create_graph",
        edit("second_derivative", "first, = grad(f(x).sum(), x, create_graph=True)", "first, = grad(f(x).sum(), x)"),
        lost={"second_derivative", "second_derivative_clean"},
        feedback={"second_derivative": "pass create_graph=True to the first grad"},
    ),
    Mutant(
        "detached_between_the_two_grads",
        edit("second_derivative", "second, = grad(first.sum(), x)",
             "second, = grad(first.detach().requires_grad_().sum(), x)"),
        lost={"second_derivative", "second_derivative_clean"},
        feedback={"second_derivative": "not connected to x any more"},
    ),
    Mutant(
        "second_grad_also_records",
        edit("second_derivative", "second, = grad(first.sum(), x)", "second, = grad(first.sum(), x, create_graph=True)"),
        lost={"second_derivative_clean"},
        feedback={"second_derivative_clean": "Only the first grad needs create_graph=True"},
    ),
    Mutant(
        "hvp_forgot_create_graph",
        edit("hvp", "g, = grad(f(x), x, create_graph=True)", "g, = grad(f(x), x)"),
        lost=AFTER_HVP,
        feedback={"hvp_quadratic": "pass create_graph=True"},
        diagnosis="forgot_create_graph",  # the same mistake, in hvp
    ),
    Mutant(
        "hvp_not_dotted_with_v",
        edit("hvp", "hv, = grad((g * v).sum(), x)", "hv, = grad(g * v, x)"),
        lost=AFTER_HVP,
        feedback={"hvp_quadratic": "Take the dot product of the gradient with v"},
    ),
    Mutant(
        "hvp_ignores_v",
        edit("hvp", "hv, = grad((g * v).sum(), x)", "hv, = grad(g.sum(), x)"),
        lost=AFTER_HVP,
        feedback={"hvp_quadratic": "instead of the dot product (g * v).sum()"},
    ),
    Mutant(
        "hessian_uses_the_gradient_twice",
        {"hessian": '''
def hessian(f, x):
    g, = grad(f(x), x)
    return g.reshape(-1, 1) * g.reshape(1, -1)
'''},
        lost={"hessian", "hessian_columns", "newton_quadratic", "newton_rosenbrock"},
        feedback={"hessian": "uses the gradient twice"},
    ),
    Mutant(
        "newton_step_sign_error",
        edit("newton", "x = x.detach() - minigrad.tensor(s, dtype=x.dtype)", "x = x.detach() + minigrad.tensor(s, dtype=x.dtype)"),
        lost={"newton_quadratic", "newton_rosenbrock"},
        feedback={"newton_quadratic": "the step has the wrong sign", "newton_rosenbrock": "go uphill"},
    ),
    Mutant(
        "hvp_forms_the_hessian",
        {"hvp": """
def hvp(f, x, v):
    g, = grad(f(x), x, create_graph=True)
    rows = [grad(g[i], x, retain_graph=True)[0] for i in range(x.shape[0])]
    return minigrad.stack(rows, 0) @ v
"""},
        lost={"hvp_two_passes"},
        feedback={"hvp_two_passes": "it builds the Hessian, one row or column per call"},
    ),
    Mutant(
        "hessian_without_hvp",
        {"hessian": """
def hessian(f, x):
    g, = grad(f(x), x, create_graph=True)
    return minigrad.stack([grad(g[i], x, retain_graph=True)[0] for i in range(x.shape[0])], 1)
"""},
        lost={"hessian_columns"},
        feedback={"hessian_columns": "called your hvp 0 time(s), expected 3"},
    ),
    Mutant(
        "newton_makes_the_callers_x0_require_grad",
        edit("newton", "    x = x0.detach().clone()\n    for _ in range(steps):\n        x = x.detach().requires_grad_()",
             "    x = x0\n    for _ in range(steps):\n        x.requires_grad_()"),
        lost={"newton_quadratic"},
        feedback={"newton_quadratic": "never change x0 itself"},
    ),
    # -- what the worksheet says, checked (issue 28) ----------------------------------------------
    Mutant(
        "hvp_through_backward_and_x_grad",
        edit("hvp", "    hv, = grad((g * v).sum(), x)\n    return hv", "    (g * v).sum().backward()\n    return x.grad"),
        lost={"hvp_quadratic", "hvp_rosenbrock", "hvp_two_passes", "hessian", "hessian_columns", "newton_quadratic",
              "newton_rosenbrock"},
        feedback={"hvp_quadratic": "hvp wrote x.grad: you called .backward()"},
    ),
    Mutant(
        "hessian_returned_as_a_list",
        edit("hessian", "return minigrad.stack([hvp(f, x, basis[i]) for i in range(n)], 1)",
             "return [hvp(f, x, basis[i]) for i in range(n)]"),
        lost={"hessian", "hessian_columns", "newton_quadratic", "newton_rosenbrock"},
        feedback={"hessian": "hessian(f, x) returned a list of 2 (Tensor, Tensor), where one tensor was expected"},
    ),
]
