"""Common mistakes in stage 02, as small mutants of the solution."""
from tests.mutants import Mutant

RECORDER = '''
class Node:
    def __init__(self, op, inputs):
        self.op = op
        self.inputs = tuple(inputs)


class Value:
    def __init__(self, data, node=None):
        self.data = data
        self.node = Node("leaf", ()) if node is None else node


def add(a, b):
    return Value(a.data + b.data, Node("add", (a.node, b.node)))


def mul(a, b):
    return Value(a.data * b.data, Node("mul", (a.node, b.node)))


def exp(a):
    return Value(math.exp(a.data), Node("exp", (a.node,)))
'''

LIST_GRAPH = '''
def list_graph(tensor):
    if tensor.grad_fn is None:
        return [], []
    nodes, edges = [tensor.grad_fn], []
    seen, stack = {tensor.grad_fn}, [tensor.grad_fn]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            edges.append((node, child))
            if child not in seen:
                seen.add(child)
                nodes.append(child)
                stack.append(child)
    return nodes, edges
'''

LIST_CHECKS = {"graph_nodes", "graph_root_first", "graph_edges", "graph_deep", "graph_diamonds", "graph_real"}

MUTANTS = [
    Mutant(
        "inputs_as_a_set",
        {"recorder": RECORDER.replace("self.inputs = tuple(inputs)", "self.inputs = tuple(set(inputs))")},
        lost={"recorder_records", "recorder_shares"},
        feedback={"recorder_records": "(a tuple, not a set)"},
    ),
    Mutant(
        "inputs_in_the_wrong_order",
        {"recorder": RECORDER.replace('Node("mul", (a.node, b.node))', 'Node("mul", (b.node, a.node))')},
        lost={"recorder_records", "recorder_shares"},
        feedback={"recorder_records": "the inputs are in the wrong order"},
    ),
    Mutant(
        "new_node_at_every_use",
        {"recorder": RECORDER.replace('''        self.data = data
        self.node = Node("leaf", ()) if node is None else node
''', '''        self.data = data
        self.op, self.inputs = ("leaf", ()) if node is None else (node.op, node.inputs)

    @property
    def node(self):
        return Node(self.op, self.inputs)
''')},
        lost={"recorder_shares"},
        feedback={"recorder_shares": "reading a.node twice gives two different objects"},
    ),
    Mutant(
        "shared_default_leaf_node",
        {"recorder": RECORDER.replace(
            '    def __init__(self, data, node=None):\n        self.data = data\n'
            '        self.node = Node("leaf", ()) if node is None else node',
            '    def __init__(self, data, node=Node("leaf", ())):\n        self.data = data\n        self.node = node')},
        lost={"recorder_shares"},
        feedback={"recorder_shares": "a default argument such as node=Node('leaf', ()) is evaluated once"},
    ),
    Mutant(
        "leaves_first",
        {"list_graph": LIST_GRAPH.replace("    return nodes, edges", "    return nodes[::-1], edges")},
        lost={"graph_root_first"},
        feedback={"graph_root_first": "start with tensor.grad_fn (SumBackward0"},
    ),
    Mutant(
        "edges_read_at_every_visit",
        {"list_graph": '''
def list_graph(tensor):
    if tensor.grad_fn is None:
        return [], []
    nodes, edges, seen, stack = [], [], set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            nodes.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                edges.append((node, child))
                stack.append(child)
    return nodes, edges
'''},
        lost={"graph_edges", "graph_diamonds", "graph_real"},
        feedback={"graph_edges": "had its next_functions read twice"},
    ),
    Mutant(
        "leaf_without_a_node",
        {"recorder": RECORDER.replace('Node("leaf", ()) if node is None else node', "node")},
        lost={"recorder_records", "recorder_shares"},
        feedback={"recorder_records": "Node('leaf', ())"},
    ),
    Mutant(
        "edges_reversed",
        {"list_graph": LIST_GRAPH.replace("edges.append((node, child))", "edges.append((child, node))")},
        lost={"graph_edges", "graph_real"},
        feedback={"graph_edges": "point from producer to consumer"},
    ),
    Mutant(
        "no_visited_set",
        {"list_graph": '''
def list_graph(tensor):
    if tensor.grad_fn is None:
        return [], []
    nodes, edges, stack = [], [], [tensor.grad_fn]
    while stack:
        node = stack.pop()
        nodes.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                edges.append((node, child))
                stack.append(child)
    return nodes, edges
'''},
        lost=LIST_CHECKS,
        feedback={"graph_nodes": "MulBackward0(h) appears 3 times"},
    ),
    Mutant(
        "deduplicates_without_a_visited_set",
        {"list_graph": '''
def list_graph(tensor):
    if tensor.grad_fn is None:
        return [], []
    nodes, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        nodes.add(node)
        stack.extend(child for child, _ in node.next_functions if child is not None)
    nodes = [tensor.grad_fn] + [n for n in nodes if n is not tensor.grad_fn]
    edges = [(n, child) for n in nodes for child, _ in n.next_functions if child is not None]
    return nodes, edges
'''},
        lost={"graph_diamonds"},
        feedback={"graph_diamonds": "never finished"},
    ),
    Mutant(
        "skips_leaves",
        {"list_graph": LIST_GRAPH.replace("if child is None:", "if child is None or not child.next_functions:")},
        lost=LIST_CHECKS,
        feedback={"graph_nodes": "AccumulateGrad nodes are nodes too"},
    ),
    Mutant(
        "keeps_none",
        {"list_graph": LIST_GRAPH.replace('''            if child is None:
                continue
            edges.append((node, child))
''', '''            edges.append((node, child))
            if child is None:
                nodes.append(None)
                continue
''')},
        lost=LIST_CHECKS,
        feedback={"graph_nodes": "your nodes include None"},
    ),
    Mutant(
        "recursive",
        {"list_graph": '''
def list_graph(tensor):
    nodes, edges, seen = [], [], set()

    def visit(node):
        seen.add(node)
        nodes.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            edges.append((node, child))
            if child not in seen:
                visit(child)

    if tensor.grad_fn is not None:
        visit(tensor.grad_fn)
    return nodes, edges
'''},
        lost={"graph_deep"},
        feedback={"graph_deep": "recursion limit"},
    ),
    Mutant(
        "edges_as_a_set",
        {"list_graph": LIST_GRAPH.replace("return nodes, edges", "return nodes, list(set(edges))")},
        lost={"graph_edges", "graph_real"},
        feedback={"graph_edges": "appears twice"},
    ),
    Mutant(  # issue 28: was told "the inputs are in the wrong order"
        "op_renamed",
        {"recorder": RECORDER.replace('Node("mul", (a.node, b.node))', 'Node("*", (a.node, b.node))')},
        lost={"recorder_records", "recorder_shares"},
        feedback={"recorder_records": "an op is recorded as '*' where 'mul' is expected"},
    ),
]
