"""Known open differences between minigrad and torch, by the program feature that shows them."""

# Program features that hit a known, still open difference: the generator leaves them out so the
# property test keeps finding NEW differences. Each names its xfail test in
# tests/test_differential_regressions.py; delete the entry when that test starts passing.
OPEN_DIFFERENCES: dict[str, str] = {
    "node post-hook": "test_post_hook_gets_one_grad_per_tensor_input",
    "non-leaf inputs": "test_grad_of_an_input_whose_node_runs_sees_its_hooks",
    "prod of one element under create_graph": "test_prod_of_one_element_gradient_does_not_require_grad",
    "custom Function view after in-place": "test_custom_function_view_is_refused_after_in_place_on_its_base",
    "backward(inputs=...)": "test_backward_inputs_run_the_input_node",
    "in-place near views from unbind/split/chunk": "test_unbind_sibling_view_is_refused_after_in_place",
    "node pre-hook of a node with a non-differentiable output": "test_pre_hook_of_max_gets_only_the_values_gradient",
    "setitem from a detached alias": "test_setitem_of_an_unsqueezed_alias_under_no_grad",
    "float64 values put into float32 by advanced index": "test_setitem_with_advanced_index_refuses_another_dtype",
    "hooks of leaves autograd.grad does not ask for": "test_grad_does_not_call_hooks_of_other_leaves",
    "relu/abs gradient under create_graph": "test_relu_gradient_under_create_graph_requires_grad",
    "writing into an expand() under no_grad": "test_zero_of_an_expanded_tensor_under_no_grad",
    "cat/stack/matmul of mixed dtypes": "test_stack_promotes_a_float32_and_a_float64_0d_tensor",
}
