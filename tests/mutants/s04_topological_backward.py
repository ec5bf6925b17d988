"""Common mistakes in stage 04, as small mutants of the solution."""
from tests.mutants import Mutant

KAHN = '''
def topological_order(root):
    consumers, seen, stack = {}, {root}, [root]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            consumers[child] = consumers.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            consumers[child] -= 1
            if consumers[child] == 0:
                ready.append(child)
    return order
'''

BACKWARD = '''
def run_backward(root, grad, retain_graph=False):
    received = {root: {0: grad}}
    with minigrad.no_grad():
        for node in engine.topological_order([root]):
            grads = received.pop(node, None)
            if grads is None:
                continue
            input_grads = node(*[grads.get(i) for i in range(node.num_outputs)])
            if not retain_graph:
                node.release_variables()
            for (child, output_nr), g in zip(node.next_functions, input_grads):
                if child is None or g is None:
                    continue
                slot = received.setdefault(child, {})
                slot[output_nr] = g if output_nr not in slot else slot[output_nr] + g
'''

ORDER_CHECKS = {"order_complete", "order_topological", "order_deep_chain", "order_diamonds", "order_drives_engine"}

MUTANTS = [
    Mutant(
        "recursive_dfs",
        {"topological_order": '''
def topological_order(root):
    seen, post = set(), []
    def visit(node):
        seen.add(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                visit(child)
        post.append(node)
    visit(root)
    return post[::-1]
'''},
        lost={"order_deep_chain"},
        feedback={"order_deep_chain": "recursion limit"},
        diagnosis="recursion",
    ),
    Mutant(
        "no_visited_set",
        {"topological_order": '''
def topological_order(root):
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        if node in order:
            order.remove(node)
        order.append(node)
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return order
'''},
        lost={"order_diamonds"},
        feedback={"order_diamonds": "never finished"},
        diagnosis="no_visited_set",
    ),
    Mutant(
        "duplicates_in_order",
        {"topological_order": '''
def topological_order(root):
    order, stack = [], [root]
    while stack:
        node = stack.pop(0)
        order.append(node)
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return order
'''},
        lost=ORDER_CHECKS,
        feedback={"order_complete": "appears 2 times"},
    ),
    Mutant(
        "reversed_order",
        {"topological_order": KAHN.replace("    return order", "    return order[::-1]")},
        lost={"order_topological", "order_deep_chain", "order_diamonds", "order_drives_engine"},
        feedback={"order_topological": "which consumes it"},
    ),
    Mutant(
        "breadth_first_without_counts",
        {"topological_order": '''
def topological_order(root):
    order, seen, queue = [], {root}, [root]
    while queue:
        node = queue.pop(0)
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                queue.append(child)
    return order
'''},
        lost={"order_topological", "order_deep_chain", "order_diamonds", "order_drives_engine"},
        feedback={"order_topological": "gradient would be incomplete"},
        diagnosis="breadth_first",
    ),
    Mutant(
        "overwrite_instead_of_accumulate",
        {"run_backward": BACKWARD.replace(
            "slot[output_nr] = g if output_nr not in slot else slot[output_nr] + g", "slot[output_nr] = g")},
        lost={"backward_accumulates"},
        feedback={"backward_accumulates": "add the incoming gradients instead of overwriting"},
        diagnosis="overwrites",
    ),
    Mutant(
        "accumulates_in_place",
        {"run_backward": BACKWARD.replace(
            "                slot[output_nr] = g if output_nr not in slot else slot[output_nr] + g",
            "                if output_nr in slot:\n                    slot[output_nr] += g\n"
            "                else:\n                    slot[output_nr] = g")},
        lost={"backward_accumulates"},
        feedback={"backward_accumulates": "a node's backward may hand one tensor to several inputs"},
        diagnosis="accumulates_in_place",
    ),
    Mutant(  # not a mistake: the issue-11 learner's helper cell, which the grader must run too
        "helper_in_a_cell_of_its_own",
        {"topological_order": KAHN.replace("for child, _ in node.next_functions:\n            if child is None:\n"
                                           "                continue\n            consumers[child] -= 1",
                                           "for child in children(node):\n            consumers[child] -= 1")},
        lost=set(),
        added=("def children(node):\n    return [c for c, _ in node.next_functions if c is not None]\n",),
    ),
    Mutant(
        "never_frees",
        {"run_backward": BACKWARD.replace(
            "            if not retain_graph:\n                node.release_variables()\n", "")},
        lost={"backward_frees"},
        feedback={"backward_frees": "release_variables"},
        diagnosis="never_frees",
    ),
    Mutant(
        "always_frees",
        {"run_backward": BACKWARD.replace(
            "            if not retain_graph:\n                node.release_variables()",
            "            node.release_variables()")},
        lost={"backward_retain_graph"},
        feedback={"backward_retain_graph": "retain_graph=True a second run_backward raised"},
        diagnosis="always_frees",
    ),
    Mutant(
        "records_the_backward",
        {"run_backward": BACKWARD.replace("    with minigrad.no_grad():\n", "    if True:\n")},
        lost={"backward_simple", "backward_accumulates", "backward_frees", "backward_retain_graph"},
        feedback={"backward_simple": "no_grad"},
        diagnosis="records_the_backward",
    ),
    Mutant(  # issue 28: 11/11 before the checks used random graphs; (a*3)+(a*4) gave a.grad = 8, not 14
        "depth_first_preorder_with_a_visited_set",
        {"topological_order": '''
def topological_order(root):
    order, seen, stack = [], {root}, [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return order
'''},
        lost={"order_topological", "order_deep_chain", "order_diamonds", "order_drives_engine"},
        feedback={"order_topological": "Your order is a depth-first preorder"},
        diagnosis="depth_first_preorder",
    ),
    Mutant(
        "recursive_preorder",
        {"topological_order": '''
def topological_order(root):
    order, seen = [], set()
    def visit(node):
        seen.add(node)
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                visit(child)
    visit(root)
    return order
'''},
        lost={"order_topological", "order_deep_chain", "order_diamonds", "order_drives_engine"},
        feedback={"order_topological": "Your order is a depth-first preorder"},
        diagnosis="depth_first_preorder",
    ),
    Mutant(  # issue 28: counts a consumer per edge, releases once per consumer: (h * h) drops h's producers
        "releases_once_per_consumer",
        {"topological_order": KAHN.replace(
            "        order.append(node)\n        for child, _ in node.next_functions:\n            if child is None:\n"
            "                continue\n",
            "        order.append(node)\n        for child in {c for c, _ in node.next_functions if c is not None}:\n")},
        lost=ORDER_CHECKS,
        feedback={"order_complete": "count one consumer per edge"},
        diagnosis="releases_once_per_consumer",
    ),
    Mutant(  # counts a consumer once, releases per edge: a node shared by h * h is released early
        "counts_once_per_consumer",
        {"topological_order": KAHN.replace(
            "        for child, _ in node.next_functions:\n            if child is None:\n                continue\n"
            "            consumers[child] = consumers.get(child, 0) + 1",
            "        for child in {c for c, _ in node.next_functions if c is not None}:\n"
            "            consumers[child] = consumers.get(child, 0) + 1")},
        lost={"order_topological", "order_deep_chain", "order_diamonds", "order_drives_engine"},
        feedback={"order_topological": "which consumes it"},
    ),
    Mutant(  # issue 28: a walk that marks a node visited when it is taken off the stack lists it twice
        "visited_when_popped",
        {"topological_order": '''
def topological_order(root):
    order, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        seen.add(node)
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                stack.append(child)
    return order
'''},
        lost=ORDER_CHECKS,
        feedback={"order_complete": "times in your order"},
    ),
    Mutant(  # issue 28: a backward pass that only ever passes output 0 to a node
        "only_output_0",
        {"run_backward": BACKWARD.replace("node(*[grads.get(i) for i in range(node.num_outputs)])",
                                          "node(grads.get(0))")},
        lost={"backward_simple", "backward_accumulates", "backward_frees", "backward_retain_graph"},
        feedback={"backward_simple": "only output 0's gradient reached the node"},
        diagnosis="only_output_0",
    ),
]
