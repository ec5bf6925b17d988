"""Known open differences between minigrad and torch, by the program feature that shows them.

When the long run finds a difference that is not fixed at once:
add its shrunk program as a strict xfail at the end of ``tests/test_differential_regressions.py``,
an entry here (feature -> that test's name), and, at the step in ``program.py`` that draws the
feature, ``if "<feature>" in OPEN_DIFFERENCES:`` to leave it out, so the property test keeps
finding NEW differences. When the fix lands, delete the entry, the ``if`` and the test's xfail
mark.
"""

OPEN_DIFFERENCES: dict[str, str] = {
    "setitem of its own memory broadcast to more dims": "test_setitem_of_a_transposed_tensor_into_its_unsqueezed_self",
    "setitem of the whole tensor: second backward":
        "test_setitem_of_the_whole_tensor_is_a_copy_that_backward_can_run_twice",
    "setitem of the whole tensor: a view made without grad":
        "test_setitem_of_the_whole_of_a_view_made_without_grad_is_refused",
    "in-place near an expand() view": "test_expand_view_regenerated_after_in_place_accumulates_its_gradient",
    "node hooks where a None gradient flows": "test_node_hooks_of_a_node_a_none_gradient_reaches_are_called",
    "post-hook of setitem of a number": "test_setitem_of_a_number_has_no_edge_for_the_number",
}
