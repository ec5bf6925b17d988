"""Common mistakes in stage 08, as small edits of the solution's cells."""
from pathlib import Path

from minigrad.course.program import load_notebook, solution_sources
from tests.mutants import Mutant

SOLUTION = solution_sources(
    load_notebook(Path(__file__).resolve().parents[2] / "solutions" / "08_inplace_and_hooks.ipynb"))


def edit(grade_id: str, old: str, new: str, *more: str) -> dict[str, str]:
    """The solution's cell ``grade_id`` with ``old`` replaced by ``new`` (which must be there), then
    each further (old, new) pair in ``more``."""
    source = SOLUTION[grade_id]
    pairs = [(old, new), *zip(more[::2], more[1::2])]
    for before, after in pairs:
        assert before in source, f"{grade_id}: {before!r} is not in the solution any more; update this mutant"
        source = source.replace(before, after)
    return {grade_id: source}


MUTANTS = [
    Mutant(
        "saved_value_compares_with_zero",
        edit("saved_value", "if now != self.version:", "if now != 0:"),
        lost={"saved_value"},
        feedback={"saved_value": "not with 0"},
    ),
    Mutant(
        "saved_value_keeps_the_counter_not_its_value",
        edit("saved_value", "self.version = tensor._version\n", "self.counter = tensor._version_counter\n",
             "if now != self.version:", "if now != self.counter.value:"),
        lost={"saved_value"},
        feedback={"saved_value": "returned it without complaint"},
    ),
    Mutant(
        "forgot_mark_dirty",
        edit("exp_inplace", "        ctx.mark_dirty(x)\n", ""),
        lost={"inplace_forward", "inplace_backward", "inplace_guards"},
        feedback={"inplace_forward": "Call ctx.mark_dirty(x)"},
    ),
    Mutant(
        "inplace_backward_takes_exp_of_the_overwritten_tensor",
        edit("exp_inplace", "return grad_output * y", "return grad_output * y.exp()"),
        lost={"inplace_backward"},
        feedback={"inplace_backward": "forward overwrote that tensor with e^x"},
    ),
    Mutant(
        "hook_clips_each_element",
        edit("clip_hook", "        norm = (grad * grad).sum().sqrt().item()\n        if norm > max_norm:\n"
                          "            return grad * (max_norm / norm)\n        return grad",
             "        return grad.clamp(-max_norm, max_norm)"),
        lost={"clip_by_norm", "clip_returns_new"},
        feedback={"clip_by_norm": "you clipped each element"},
    ),
    Mutant(
        "hook_changes_the_gradient_in_place",
        edit("clip_hook", "            return grad * (max_norm / norm)", "            grad.mul_(max_norm / norm)"),
        lost={"clip_returns_new"},
        feedback={"clip_returns_new": "changed that gradient in place"},
    ),
    Mutant(
        "hook_scales_every_gradient_to_max_norm",
        edit("clip_hook", "        if norm > max_norm:\n            return grad * (max_norm / norm)\n        return grad",
             "        return grad * (max_norm / norm)"),
        lost={"clip_by_norm", "clip_returns_new"},
        feedback={"clip_by_norm": "only scale gradients whose norm is larger than max_norm"},
    ),
    Mutant(
        "recorder_never_removes",
        edit("recorder", "        for handle in self.handles:\n            handle.remove()", "        pass"),
        lost={"recorder_removes"},
        feedback={"recorder_removes": "still recorded gradients"},
    ),
    Mutant(
        "recorder_hooks_share_the_loop_variable",
        edit("recorder", "        self.handles = [\n            tensor.register_hook(recording_hook(name))\n"
                         "            for name, tensor in tensors.items()\n        ]",
             "        self.handles = []\n"
             "        for name, tensor in tensors.items():\n"
             "            self.handles.append(tensor.register_hook(lambda grad: self.grads[name].append(grad.clone())))"),
        lost={"recorder_records", "recorder_removes"},
        feedback={"recorder_records": "a closure made inside a loop sees the loop's final value"},
    ),
    # -- the concept on random shapes (issue 28) ------------------------------------------------
    Mutant(
        "clip_norm_per_row",
        edit("clip_hook", "        norm = (grad * grad).sum().sqrt().item()\n        if norm > max_norm:\n"
                          "            return grad * (max_norm / norm)\n        return grad",
             "        norm = (grad * grad).sum(-1, keepdim=True).sqrt()\n"
             "        return grad * (max_norm / norm).clamp(max=1.0)"),
        lost={"clip_by_norm", "clip_returns_new"},
        feedback={"clip_by_norm": "was scaled row by row"},
    ),
    Mutant(
        "clip_norm_by_a_dot_product",
        edit("clip_hook", "norm = (grad * grad).sum().sqrt().item()", "norm = (grad @ grad).sqrt().item()"),
        lost={"clip_by_norm", "clip_returns_new"},
        feedback={"clip_by_norm": "at `norm = (grad @ grad).sqrt().item()"},
    ),
]
