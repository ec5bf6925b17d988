"""Common mistakes in stage 01, as small mutants of the solution."""
from tests.mutants import Mutant

GRADIENT = '''
def numerical_gradient(f, x, eps=1e-6):
    values = x.detach().numpy()
    grad = np.zeros_like(values)
    with minigrad.no_grad():
        for i in np.ndindex(values.shape):
            original = values[i]
            values[i] = original + eps
            plus = f(x).item()
            values[i] = original - eps
            minus = f(x).item()
            values[i] = original
            grad[i] = (plus - minus) / (2 * eps)
    return minigrad.tensor(grad)
'''

CHECK = '''
def gradient_check(f, x, eps=1e-6, atol=1e-5, rtol=1e-3):
    leaf = x.detach().clone().requires_grad_()
    f(leaf).backward()
    analytical = np.zeros(x.shape) if leaf.grad is None else leaf.grad.numpy()
    numerical = numerical_gradient(f, x.detach().clone(), eps).numpy()
    error = np.abs(analytical - numerical)
    ok = bool(np.all(error <= atol + rtol * np.abs(numerical)))
    return ok, float(error.max())
'''

GRADIENT_USERS = {"gradient_values", "gradient_restores", "gradient_contract", "check_accepts_correct",
                  "check_rejects_wrong", "check_fresh_leaf", "check_tolerance"}

MUTANTS = [
    Mutant(
        "forward_difference",
        {"numerical_derivative": '''
def numerical_derivative(f, x, eps=1e-6):
    return (f(x + eps) - f(x)) / eps
'''},
        lost={"derivative_central"},
        feedback={"derivative_central": "shrank your error only 10x"},
    ),
    Mutant(
        "divides_by_eps",
        {"numerical_derivative": '''
def numerical_derivative(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / eps
'''},
        lost={"derivative_values", "derivative_central"},
        feedback={"derivative_values": "divide the difference by 2 * eps"},
    ),
    Mutant(
        "ignores_eps",
        {"numerical_derivative": '''
def numerical_derivative(f, x, eps=1e-6):
    return (f(x + 1e-6) - f(x - 1e-6)) / 2e-6
'''},
        lost={"derivative_central"},
        feedback={"derivative_central": "ignores its eps argument"},
    ),
    Mutant(
        "not_restoring",
        {"numerical_gradient": GRADIENT.replace("            values[i] = original\n", "")},
        lost={"gradient_restores"},
        feedback={"gradient_restores": "(that's eps)"},
    ),
    Mutant(
        "restores_by_arithmetic",
        {"numerical_gradient": GRADIENT.replace(
            "values[i] = original + eps", "values[i] += eps").replace(
            "values[i] = original - eps", "values[i] -= 2 * eps").replace(
            "values[i] = original\n", "values[i] += eps\n")},
        lost={"gradient_restores"},
        feedback={"gradient_restores": "Keep the original value and put it back"},
    ),
    Mutant(
        "all_elements_at_once",
        {"numerical_gradient": '''
def numerical_gradient(f, x, eps=1e-6):
    with minigrad.no_grad():
        slope = ((f(x + eps) - f(x - eps)) / (2 * eps)).item()
    return minigrad.full(x.shape, slope, dtype=minigrad.float64)
'''},
        lost=GRADIENT_USERS,
        feedback={"gradient_values": "elements of x changed at once"},
    ),
    Mutant(
        "float32",
        {"numerical_gradient": GRADIENT.replace("values = x.detach().numpy()", "x = x.detach().float()\n"
                                                "    values = x.numpy()")},
        lost=GRADIENT_USERS,
        feedback={"gradient_values": "float32"},
    ),
    Mutant(  # not a mistake: the issue-11 learner's helper cell, which the grader must run too
        "helper_in_a_cell_of_its_own",
        {"numerical_derivative": "\ndef numerical_derivative(f, x, eps=1e-6):\n    return central_slope(f, x, eps)\n"},
        lost=set(),
        added=("def central_slope(f, x, eps):\n    return (f(x + eps) - f(x - eps)) / (2 * eps)\n",),
    ),
    Mutant(
        "absolute_error_only",
        {"gradient_check": CHECK.replace("atol + rtol * np.abs(numerical)", "atol")},
        lost={"check_tolerance"},
        feedback={"check_tolerance": "the tolerance must grow with the gradient"},
    ),
    Mutant(
        "relative_error_only",
        {"gradient_check": CHECK.replace("error <= atol + rtol * np.abs(numerical)",
                                         "error / np.abs(numerical) <= rtol")},
        lost={"check_accepts_correct", "check_tolerance", "check_fresh_leaf"},
        feedback={"check_accepts_correct": "A purely relative test fails"},
    ),
    Mutant(
        "never_calls_backward",
        {"gradient_check": CHECK.replace(
            "analytical = np.zeros(x.shape) if leaf.grad is None else leaf.grad.numpy()",
            "analytical = numerical_gradient(f, x.detach().clone(), eps).numpy()")},
        lost={"check_rejects_wrong", "check_tolerance"},
        feedback={"check_rejects_wrong": "said ok for x**2"},
    ),
    Mutant(
        "backward_into_the_callers_x",
        {"gradient_check": CHECK.replace("leaf = x.detach().clone().requires_grad_()", "leaf = x.requires_grad_()")},
        lost={"check_fresh_leaf"},
        feedback={"check_fresh_leaf": "backward added into the caller's x.grad"},
    ),
    Mutant(
        "max_error_as_a_numpy_number",
        {"gradient_check": CHECK.replace("float(error.max())", "error.max()")},
        lost={"check_fresh_leaf"},
        feedback={"check_fresh_leaf": "return it as a Python float"},
    ),
    Mutant(
        "evaluations_recorded",
        {"numerical_gradient": GRADIENT.replace("    with minigrad.no_grad():\n", "    if True:\n")},
        lost={"gradient_contract"},
        feedback={"gradient_contract": "inside `with minigrad.no_grad():`"},
    ),
    Mutant(
        "returns_a_numpy_array",
        {"numerical_gradient": GRADIENT.replace("return minigrad.tensor(grad)", "return grad")},
        lost={"gradient_contract", "check_accepts_correct", "check_rejects_wrong", "check_fresh_leaf",
              "check_tolerance"},
        feedback={"gradient_contract": "returned a ndarray: return a minigrad tensor"},
    ),
    Mutant(
        "max_relative_error",
        {"gradient_check": CHECK.replace("float(error.max())", "float((error / np.abs(numerical)).max())")},
        lost={"check_accepts_correct", "check_tolerance", "check_rejects_wrong", "check_fresh_leaf"},
        feedback={"check_rejects_wrong": "you returned the relative difference"},
    ),
    Mutant(  # issue 28: full points before
        "crashes_without_a_gradient",
        {"gradient_check": CHECK.replace(
            "analytical = np.zeros(x.shape) if leaf.grad is None else leaf.grad.numpy()",
            "analytical = leaf.grad.numpy()")},
        lost={"check_accepts_correct", "check_tolerance", "check_fresh_leaf"},
        feedback={"check_accepts_correct": "backward reached no leaf, so leaf.grad is None"},
    ),
]
