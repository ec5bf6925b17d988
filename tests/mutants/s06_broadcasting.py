"""Common mistakes in stage 06, as small edits of the solution's cells."""
from pathlib import Path

from minigrad.course.program import load_notebook, solution_sources
from tests.mutants import Mutant

SOLUTION = solution_sources(
    load_notebook(Path(__file__).resolve().parents[2] / "solutions" / "06_broadcasting.ipynb"))


def edit(grade_id: str, old: str, new: str) -> dict[str, str]:
    """The solution's cell ``grade_id`` with ``old`` replaced by ``new`` (which must be there)."""
    source = SOLUTION[grade_id]
    assert old in source, f"{grade_id}: {old!r} is not in the solution any more; update this mutant"
    return {grade_id: source.replace(old, new)}


EVERYTHING_AFTER_UNBROADCAST = {"add_grads", "mul_grads", "matmul_shared", "matmul_batched", "composite_grads"}

MUTANTS = [
    Mutant(
        "unbroadcast_without_keepdim",
        edit("unbroadcast", "grad = grad.sum(dim=stretched, keepdim=True)", "grad = grad.sum(dim=stretched)"),
        lost={"unbroadcast_ones"} | EVERYTHING_AFTER_UNBROADCAST,
        feedback={"unbroadcast_ones": "Sum them with keepdim=True"},
    ),
    Mutant(
        "unbroadcast_aligned_from_the_left",
        {"unbroadcast": '''
def unbroadcast(grad, shape):
    shape = tuple(shape)
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(dim=stretched, keepdim=True)
    lead = grad.ndim - len(shape)
    if lead > 0:
        grad = grad.sum(dim=tuple(range(lead)))
    return grad
'''},
        lost={"unbroadcast_ones"} | EVERYTHING_AFTER_UNBROADCAST,
        feedback={"unbroadcast_ones": "line up with the *last* dimensions of grad"},
    ),
    Mutant(
        "unbroadcast_forgets_leading_dims",
        edit("unbroadcast", "    if lead > 0:\n        grad = grad.sum(dim=tuple(range(lead)))\n", ""),
        lost={"unbroadcast_leading", "unbroadcast_ones"} | EVERYTHING_AFTER_UNBROADCAST,
        feedback={"unbroadcast_leading": "returned shape [2, 3, 4], expected [3, 4]",
                  "unbroadcast_ones": "line up with the *last* dimensions of grad"},
    ),
    Mutant(
        "add_returns_unreduced_gradients",
        edit("add_mul", "return unbroadcast(grad, shape_a), unbroadcast(grad, shape_b)", "return grad, grad"),
        lost={"add_grads", "composite_grads"},
        feedback={"add_grads": "that is the output's shape, not reduced"},
    ),
    Mutant(
        "mul_multiplies_by_the_same_operand",
        edit("add_mul", "return unbroadcast(grad * b, a.shape), unbroadcast(grad * a, b.shape)",
             "return unbroadcast(grad * a, a.shape), unbroadcast(grad * b, b.shape)"),
        lost={"mul_grads", "composite_grads"},
        feedback={"mul_grads": "you multiplied grad by a itself"},
    ),
    Mutant(
        "matmul_transposes_the_wrong_operand",
        edit("batched_matmul", "grad_a = unbroadcast(grad @ b.transpose(-1, -2), a.shape)",
             "grad_a = unbroadcast(grad.transpose(-1, -2) @ b, a.shape)"),
        lost={"matmul_shared", "matmul_batched", "composite_grads"},
        feedback={"matmul_shared": "grad_A = grad_C @ Bᵀ"},
    ),
    Mutant(
        "matmul_does_not_sum_over_the_batch",
        edit("batched_matmul", "grad_b = unbroadcast(a.transpose(-1, -2) @ grad, b.shape)",
             "grad_b = a.transpose(-1, -2) @ grad"),
        lost={"matmul_shared", "composite_grads"},
        feedback={"matmul_shared": "shared by all 3 matrices of the batch"},
    ),
    # -- what the worksheet says, checked (issue 28) ----------------------------------------------
    Mutant(
        "unbroadcast_in_numpy",
        {"unbroadcast": """
def unbroadcast(grad, shape):
    array = grad.detach().numpy()
    shape = tuple(shape)
    array = array.sum(axis=tuple(range(array.ndim - len(shape))))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and array.shape[i] != 1)
    if axes:
        array = array.sum(axis=axes, keepdims=True)
    return minigrad.tensor(array, dtype=grad.dtype)
"""},
        lost={"unbroadcast_leading", "unbroadcast_ones"} | EVERYTHING_AFTER_UNBROADCAST,
        feedback={"unbroadcast_leading": "it went through NumPy", "unbroadcast_ones": "gradgradcheck fails"},
    ),
    Mutant(
        "unbroadcast_averages_the_stretched_dimensions",
        edit("unbroadcast", "grad = grad.sum(dim=stretched, keepdim=True)", "grad = grad.mean(dim=stretched, keepdim=True)"),
        lost={"unbroadcast_ones"} | EVERYTHING_AFTER_UNBROADCAST,
        feedback={"unbroadcast_ones": "divided by 4: you averaged (mean) where the gradients must be added"},
    ),
    Mutant(
        "unbroadcast_averages_the_leading_dimensions",
        edit("unbroadcast", "grad = grad.sum(dim=tuple(range(lead)))", "grad = grad.mean(dim=tuple(range(lead)))"),
        lost={"unbroadcast_leading", "unbroadcast_ones"} | EVERYTHING_AFTER_UNBROADCAST,
        feedback={"unbroadcast_leading": "divided by 2: you averaged (mean)"},
    ),
    Mutant(
        "mul_keeps_its_inputs_as_ctx_attributes",
        {"add_mul": edit("add_mul", "ctx.save_for_backward(a, b)\n        return a * b",
                         "ctx.a, ctx.b = a, b\n        return a * b")["add_mul"].replace(
            "a, b = ctx.saved_tensors", "a, b = ctx.a, ctx.b")},
        lost={"mul_grads", "composite_grads"},
        feedback={"mul_grads": "you kept it as ctx.a"},
    ),
    Mutant(
        "matmul_keeps_its_inputs_as_ctx_attributes",
        {"batched_matmul": edit("batched_matmul", "ctx.save_for_backward(a, b)", "ctx.a, ctx.b = a, b")[
            "batched_matmul"].replace("a, b = ctx.saved_tensors", "a, b = ctx.a, ctx.b")},
        lost={"matmul_shared", "matmul_batched", "composite_grads"},
        feedback={"matmul_shared": "you kept it as ctx.a", "matmul_batched": "you kept it as ctx.a"},
    ),
    Mutant(
        "mul_gradients_through_numpy",
        edit("add_mul", "return unbroadcast(grad * b, a.shape), unbroadcast(grad * a, b.shape)",
             "grad_a = minigrad.tensor(grad.numpy() * b.detach().numpy())\n"
             "        grad_b = minigrad.tensor(grad.numpy() * a.detach().numpy())\n"
             "        return unbroadcast(grad_a, a.shape), unbroadcast(grad_b, b.shape)"),
        lost={"mul_grads", "composite_grads"},
        feedback={"mul_grads": "gradgradcheck fails for BroadcastMul"},
    ),
    Mutant(
        "matmul_returns_a_tuple",
        edit("batched_matmul", "return a @ b", "return (a @ b,)"),
        lost={"matmul_shared", "matmul_batched", "composite_grads"},
        feedback={"matmul_shared": "returned a tuple of 1 (Tensor), where one tensor was expected"},
    ),
]
