"""Known open differences between minigrad and torch, by the program feature that shows them.

When the long run finds a difference that is not fixed at once:
add its shrunk program as a strict xfail at the end of ``tests/test_differential_regressions.py``,
an entry here (feature -> that test's name), and, at the step in ``program.py`` that draws the
feature, ``if "<feature>" in OPEN_DIFFERENCES:`` to leave it out, so the property test keeps
finding NEW differences. When the fix lands, delete the entry, the ``if`` and the test's xfail
mark.
"""

OPEN_DIFFERENCES: dict[str, str] = {
    "recorded index_put into an expanded tensor": "test_index_put_into_an_expanded_tensor_while_recording",
    "detach of an inference tensor changed in place": "test_detach_of_an_inference_tensor_changed_in_place",
    "set_data with an inference tensor": "test_set_data_of_an_inference_tensor_then_a_view",
}
