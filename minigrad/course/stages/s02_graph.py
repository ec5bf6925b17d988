"""Stage 02: recording operations as a graph, and walking minigrad's real one.

The learner first writes a tiny recorder of their own (``Node``, ``Value`` and
``add``, ``mul``, ``exp`` on scalars, micrograd-style), then
``list_graph(tensor)``: every node of a tensor's graph, once, and every edge
``(consumer, producer)``, found by following ``grad_fn`` and ``next_functions``
without recursion.

``list_graph`` is probed on stand-in nodes with unique names (``ProbeNode``),
which also count how often their ``next_functions`` are read, so a walk without
a visited set is caught by its visit count rather than by waiting for 2**30 paths.
"""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad.autograd import engine
from minigrad.course import probe_graphs
from minigrad.course.checks import Check, Stage, Verdict, close, fmt


# -- the recorder ----------------------------------------------------------------------------
def _describe(node, depth: int = 0):
    """A node as plain data: [op, [inputs...]] (structure only, no identities)."""
    if depth > 20:
        return "..."
    op = getattr(node, "op", None)
    inputs = getattr(node, "inputs", None)
    if not isinstance(op, str) or inputs is None:
        return f"<{type(node).__name__}>"
    return [op, [_describe(i, depth + 1) for i in inputs]]


def _show(description) -> str:
    if isinstance(description, str):
        return description
    op, inputs = description
    return op if op == "leaf" and not inputs else f"{op}({', '.join(_show(i) for i in inputs)})"


def _renamed_op(got, want) -> tuple[str, str] | None:
    """(recorded op, expected op) where the two descriptions have the same shape but an op name differs."""
    if isinstance(got, str) or isinstance(want, str):
        return None
    if len(got[1]) != len(want[1]):
        return None
    inner = [_renamed_op(g, w) for g, w in zip(got[1], want[1])]
    if any(isinstance(g, str) != isinstance(w, str) for g, w in zip(got[1], want[1])):
        return None
    if got[0] != want[0]:
        return got[0], want[0]
    return next((r for r in inner if r is not None), None)


def probe_recorder_values(ns: dict, rng: np.random.Generator) -> dict:
    Value, add, mul, exp = ns["Value"], ns["add"], ns["mul"], ns["exp"]
    p, q = (float(v) for v in rng.uniform(-2, 2, 2))
    a, b = Value(p), Value(q)
    return {"p": p, "q": q, "leaf": a.data, "add": add(a, b).data, "mul": mul(a, b).data, "exp": exp(a).data,
            "nested": add(mul(a, b), exp(b)).data}


def judge_recorder_values(mine: dict, ref: dict) -> Verdict:
    p, q = mine["p"], mine["q"]
    cases = {"leaf": f"Value({fmt(p)}).data", "add": f"add(a, b).data with a = {fmt(p)}, b = {fmt(q)}",
             "mul": f"mul(a, b).data with a = {fmt(p)}, b = {fmt(q)}", "exp": f"exp(a).data with a = {fmt(p)}",
             "nested": f"add(mul(a, b), exp(b)).data with a = {fmt(p)}, b = {fmt(q)}"}
    for key, what in cases.items():
        if not isinstance(mine[key], (int, float)) or not close(mine[key], ref[key], rtol=1e-9, atol=1e-12):
            return Verdict(False, f"{what} is {fmt(mine[key])}, expected {fmt(ref[key])}")
    return Verdict(True)


def probe_recorder_records(ns: dict, rng: np.random.Generator) -> dict:
    Value, add, mul, exp = ns["Value"], ns["add"], ns["mul"], ns["exp"]
    a, b, c = Value(1.5), Value(-0.5), Value(2.0)
    return {
        "leaf": _describe(a.node),
        "mul": _describe(mul(exp(a), b).node),
        "add": _describe(add(b, mul(a, c)).node),
        "twice": _describe(add(c, c).node),
        "nested": _describe(exp(add(mul(a, b), c)).node),
    }


def judge_recorder_records(mine: dict, ref: dict) -> Verdict:
    exprs = {"leaf": "Value(1.5)", "mul": "mul(exp(a), b)", "add": "add(b, mul(a, c))", "twice": "add(c, c)",
             "nested": "exp(add(mul(a, b), c))"}
    if mine["leaf"] != ref["leaf"]:
        return Verdict(False, f"a leaf's node records {_show(mine['leaf'])}: give a Value made from a number "
                              "a node with op 'leaf' and no inputs, Node('leaf', ())")
    for key, expr in exprs.items():
        got, want = mine[key], ref[key]
        if isinstance(got, list) and len(got[1]) != len(want[1]):
            return Verdict(False, f"{expr} recorded {_show(got)}, expected {_show(want)}: its node has "
                                  f"{len(got[1])} input(s), expected {len(want[1])}. Record one input per argument, "
                                  "even when both arguments are the same value (a tuple, not a set)")
    for key, expr in exprs.items():
        got, want = mine[key], ref[key]
        if got == want:
            continue
        where = f"{expr} recorded {_show(got)}, expected {_show(want)}"
        renamed = _renamed_op(got, want) if isinstance(got, list) else None
        if renamed is not None:
            return Verdict(False, f"{where}: an op is recorded as {renamed[0]!r} where {renamed[1]!r} is expected. "
                                  "Record the op names the worksheet gives: 'leaf', 'add', 'mul', 'exp' (the "
                                  "graph is read by name, as PyTorch's MulBackward0)")
        if isinstance(got, list) and got[0] == want[0] and sorted(map(str, got[1])) == sorted(map(str, want[1])):
            return Verdict(False, f"{where}: the inputs are in the wrong order. Record them in argument order: "
                                  "the backward of a * b sends grad * b to the first input and grad * a to the second "
                                  "(grad: the gradient arriving at the product)")
        return Verdict(False, f"{where}: each op's node records its op name and the nodes of its arguments")
    return Verdict(True)


def probe_recorder_shares(ns: dict, rng: np.random.Generator) -> dict:
    Value, add, mul, exp = ns["Value"], ns["add"], ns["mul"], ns["exp"]
    a, b = Value(0.5), Value(2.0)
    h = mul(a, b)
    y = add(h, exp(h))
    first, second = y.node.inputs
    distinct, stack = {}, [y.node]
    while stack and len(distinct) < 100:
        node = stack.pop()
        if id(node) not in distinct:
            distinct[id(node)] = node
            stack.extend(node.inputs)
    return {"shared": first is second.inputs[0], "is_h": first is h.node,
            "leaf_kept": h.node.inputs[0] is a.node, "stable": a.node is a.node and h.node is h.node,
            "distinct_leaves": Value(1.0).node is not Value(2.0).node, "count": len(distinct)}


def judge_recorder_shares(mine: dict, ref: dict) -> Verdict:
    if not mine["stable"]:
        return Verdict(False, "reading a.node twice gives two different objects: a value's node must be made once, "
                              "when the value is made (in __init__), and stored; a property or method that builds a "
                              "new Node on each access gives every consumer a node of its own")
    if not mine["distinct_leaves"]:
        return Verdict(False, "Value(1.0).node and Value(2.0).node are the same object, so all your leaves are one "
                              "node: a default argument such as node=Node('leaf', ()) is evaluated once, when `def` "
                              "runs, and shared by every call. Use node=None and make Node('leaf', ()) inside __init__")
    if not (mine["shared"] and mine["is_h"] and mine["leaf_kept"]):
        count = (f"your graph has {mine['count']} distinct nodes, expected {ref['count']}: "
                 if mine["count"] != ref["count"] else "")
        return Verdict(False, f"in h = mul(a, b); y = add(h, exp(h)) {count}h is used twice, so y's node and exp's "
                              "node must both point to the very same object, h.node (and h's node to a.node itself). "
                              "Record the nodes the values already have; don't build new ones when a value is used")
    return Verdict(True)


# -- list_graph: stand-in nodes ------------------------------------------------------------
class ProbeTensor:
    """A stand-in for a tensor: only ``grad_fn``."""

    def __init__(self, grad_fn) -> None:
        self.grad_fn = grad_fn


def build(edges: dict[str, list], budget_factor: int = 50) -> ProbeTensor:
    """A tensor whose graph has the edges ``consumer -> [producer or None]``; the first key is its grad_fn."""
    return ProbeTensor(probe_graphs.build(edges, budget_factor))


def small_graph(rng: np.random.Generator) -> dict[str, list]:
    """loss = (h * h + h * c).sum() with h = a * b and c needing no grad: a diamond, a repeated input, a None."""
    leaves = ["AccumulateGrad(a)", "AccumulateGrad(b)"]
    rng.shuffle(leaves)
    return {
        "SumBackward0": ["AddBackward0"],
        "AddBackward0": ["MulBackward0(h*h)", "MulBackward0(h*c)"],
        "MulBackward0(h*h)": ["MulBackward0(h)", "MulBackward0(h)"],
        "MulBackward0(h*c)": ["MulBackward0(h)", None],
        "MulBackward0(h)": leaves,
    }


def _label(node):
    if node is None or isinstance(node, str):
        return node
    name = getattr(node, "name", None)
    return name() if callable(name) else f"<{type(node).__name__}>"


def _listed(result) -> dict:
    nodes, edges = result
    return {"nodes": [_label(n) for n in nodes],
            "edges": [[_label(c), _label(p)] for c, p in edges]}


def probe_graph_nodes(ns: dict, rng: np.random.Generator) -> dict:
    out = _listed(ns["list_graph"](build(small_graph(rng))))
    try:
        leaf = _listed(ns["list_graph"](ProbeTensor(None)))
    except (AttributeError, TypeError) as e:
        leaf = {"error": f"{type(e).__name__}: {e}"[:200]}
    return {**out, "leaf": leaf}


def judge_graph_nodes(mine: dict, ref: dict) -> Verdict:
    nodes, expected = mine["nodes"], ref["nodes"]
    if None in nodes:
        return Verdict(False, "your nodes include None: a (None, 0) entry in next_functions is an input that needs "
                              "no gradient (here the constant c in h * c). It is not a node: skip it")
    repeated = [n for n in expected if nodes.count(n) > 1]
    if repeated:
        return Verdict(False, f"{repeated[0]} appears {nodes.count(repeated[0])} times in your nodes, but it is one node: "
                              "in (h * h + h * c).sum(), h = a * b is used three times, so its node (and everything "
                              "below it) is reached along several paths. Keep a set of visited nodes and list each "
                              "node the first time you reach it")
    missing = [n for n in expected if n not in nodes]
    if missing and all(n.startswith("AccumulateGrad") for n in missing):
        return Verdict(False, f"your nodes leave out {', '.join(missing)}: the leaves' AccumulateGrad nodes are nodes "
                              "too (their next_functions is empty). List every node you reach")
    if missing:
        return Verdict(False, f"your nodes leave out {missing[0]}: follow next_functions from every node you reach, "
                              "down to the leaves")
    extra = [n for n in nodes if n not in expected]
    if extra:
        return Verdict(False, f"your nodes include {extra[0]!r}, which is not a node of the graph: "
                              "list the node objects themselves")
    leaf = mine["leaf"]
    if "error" in leaf or leaf["nodes"] or leaf["edges"]:
        got = leaf.get("error") or f"({leaf['nodes']}, {leaf['edges']})"
        return Verdict(False, f"for a leaf tensor (grad_fn is None) list_graph gave {got}: "
                              "a tensor that no operation produced has an empty graph, ([], [])")
    return Verdict(True)


def judge_graph_root_first(mine: dict, ref: dict) -> Verdict:
    nodes, expected = mine["nodes"], ref["nodes"]
    if nodes[:1] != expected[:1]:
        return Verdict(False, f"your nodes start with {nodes[0] if nodes else 'nothing'}: start with tensor.grad_fn "
                              f"({expected[0]}, the node that made the tensor), then list each node as you first "
                              "reach it from there")
    return Verdict(True)


def probe_graph_edges(ns: dict, rng: np.random.Generator) -> dict:
    edges = small_graph(rng)
    return _listed(ns["list_graph"](build(edges)))


def judge_graph_edges(mine: dict, ref: dict) -> Verdict:
    got, want = sorted(map(tuple, mine["edges"])), sorted(map(tuple, ref["edges"]))
    if got == want:
        return Verdict(True)
    if sorted((p, c) for c, p in got) == want:
        return Verdict(False, f"your edges point from producer to consumer, e.g. ({got[0][0]}, {got[0][1]}): "
                              "write each edge as (consumer, producer), the way next_functions points: "
                              "from a node to the nodes that made its inputs")
    if set(got) == set(want) and len(got) < len(want):
        return Verdict(False, f"you list {len(got)} edges, expected {len(want)}: MulBackward0(h*h) uses "
                              "MulBackward0(h) twice (h * h), so that edge appears twice. Give one edge per "
                              "non-None entry of next_functions, without removing repeats")
    if set(got) == set(want):
        return Verdict(False, f"you list {len(got)} edges, expected {len(want)}: a node reached along two paths "
                              "(MulBackward0(h) is used by both products) had its next_functions read twice. Keep "
                              "a set of visited nodes, and list a node's edges only the first time you visit it")
    missing = [e for e in want if e not in got]
    if missing:
        return Verdict(False, f"the edge ({missing[0][0]}, {missing[0][1]}) is missing: give one edge "
                              "(node, child) for every non-None (child, output_nr) in node.next_functions")
    extra = [e for e in got if e not in want]
    return Verdict(False, f"the edge ({extra[0][0]}, {extra[0][1]}) is not in the graph, or appears too often: "
                          "give one edge (node, child) for every non-None entry of node.next_functions, "
                          "reading each node's next_functions once")


def probe_graph_deep(ns: dict, rng: np.random.Generator) -> dict:
    depth = 10_000
    try:
        out = _listed(ns["list_graph"](build({f"node{i}": [f"node{i + 1}"] for i in range(depth)})))
    except RecursionError:
        return {"recursion": True}
    return {"recursion": False, "nodes": len(out["nodes"]), "distinct": len(set(out["nodes"])),
            "edges": len(out["edges"])}


def judge_graph_deep(mine: dict, ref: dict) -> Verdict:
    if mine["recursion"]:
        return Verdict(False, "a chain 10,000 nodes deep hit Python's recursion limit: your walk recurses once per "
                              "node. Use a loop with an explicit stack (a list you append to and pop from)")
    if (mine["nodes"], mine["distinct"], mine["edges"]) != (ref["nodes"], ref["distinct"], ref["edges"]):
        return Verdict(False, f"on a chain of {ref['nodes']} nodes you list {mine['distinct']} distinct nodes and "
                              f"{mine['edges']} edges, expected {ref['nodes']} and {ref['edges']}")
    return Verdict(True)


def probe_graph_diamonds(ns: dict, rng: np.random.Generator) -> dict:
    levels = 30  # 2**30 paths from top to bottom, but only 3 * 30 + 1 nodes
    edges = {}
    for i in range(levels):
        edges[f"join{i}"] = [f"left{i}", f"right{i}"]
        edges[f"left{i}"] = [f"join{i + 1}"]
        edges[f"right{i}"] = [f"join{i + 1}"]
    try:
        out = _listed(ns["list_graph"](build(edges, budget_factor=20)))
    except probe_graphs.Exploded:
        return {"exploded": True}
    return {"exploded": False, "nodes": len(out["nodes"])}


def judge_graph_diamonds(mine: dict, ref: dict) -> Verdict:
    if mine["exploded"]:
        return Verdict(False, "on 30 stacked diamonds (91 nodes, 2**30 paths) your walk kept going back to nodes it had "
                              "already seen and never finished: mark each node visited the first time you reach it, "
                              "and never push a visited node again")
    if mine["nodes"] != ref["nodes"]:
        return Verdict(False, f"on 30 stacked diamonds you list {mine['nodes']} nodes, expected {ref['nodes']}")
    return Verdict(True)


def probe_graph_real(ns: dict, rng: np.random.Generator) -> dict:
    x, y = (minigrad.tensor(rng.standard_normal(3), requires_grad=True) for _ in range(2))
    c = minigrad.tensor(rng.standard_normal(3))
    h = x * y
    loss = (h * h + h.exp() * c).sum()
    real = set(engine.topological_order([loss.grad_fn]))
    nodes, edges = ns["list_graph"](loss)
    return {"real": all(any(n is r for r in real) for n in nodes),
            "nodes": sorted(_label(n) for n in nodes),
            "edges": sorted([_label(a), _label(b)] for a, b in edges)}


def judge_graph_real(mine: dict, ref: dict) -> Verdict:
    if not mine["real"]:
        return Verdict(False, "on a real minigrad graph, your nodes are not the graph's node objects: "
                              "return the nodes you reach through grad_fn and next_functions themselves")
    if mine["nodes"] != ref["nodes"]:
        return Verdict(False, f"for (h * h + h.exp() * c).sum() with h = x * y you list the nodes {mine['nodes']}, "
                              f"expected {ref['nodes']}")
    if mine["edges"] != ref["edges"]:
        return Verdict(False, f"for (h * h + h.exp() * c).sum() with h = x * y you list {len(mine['edges'])} edges, "
                              f"expected {len(ref['edges'])}: {ref['edges']}")
    return Verdict(True)


def reference() -> dict:
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

    return {"Node": Node, "Value": Value, "add": add, "mul": mul, "exp": exp, "list_graph": list_graph}


# The mistakes the feedback names (issue 28), each by the name of its catalogued mutant: a phrase
# appears only for that mistake's results (tests/course/test_mutants.py: no mutant is told another's).
DIAGNOSES = {
    "op_renamed": "an op is recorded as",
    "inputs_as_a_set": "(a tuple, not a set)",
    "inputs_in_the_wrong_order": "the inputs are in the wrong order",
    "new_node_at_every_use": "reading a.node twice gives two different objects",
    "shared_default_leaf_node": "a default argument such as node=Node('leaf', ()) is evaluated once",
    "leaves_first": "start with tensor.grad_fn (SumBackward0",
    "edges_read_at_every_visit": "had its next_functions read twice",
    "leaf_without_a_node": "a node with op 'leaf' and no inputs",
    "edges_reversed": "point from producer to consumer",
    "skips_leaves": "AccumulateGrad nodes are nodes too",
    "keeps_none": "your nodes include None",
    "recursive": "recursion limit",
}


STAGE = Stage(
    number="02",
    name="graph",
    title="Recording operations as a graph",
    parts={"recorder": ("Node", "Value", "add", "mul", "exp"), "list_graph": ("list_graph",)},
    checks=(
        Check("recorder_values", 1, "add, mul and exp compute the right values", probe_recorder_values,
              judge_recorder_values, part="recorder"),
        Check("recorder_records", 2, "each result's node records its op and its inputs, in order",
              probe_recorder_records, judge_recorder_records, needs=("recorder_values",), part="recorder"),
        Check("recorder_shares", 1, "a value used twice is one node with two consumers", probe_recorder_shares,
              judge_recorder_shares, needs=("recorder_records",), part="recorder"),
        Check("graph_nodes", 1, "every node once: leaves included, None skipped", probe_graph_nodes,
              judge_graph_nodes, part="list_graph"),
        Check("graph_root_first", 1, "the nodes start with tensor.grad_fn", probe_graph_nodes,
              judge_graph_root_first, needs=("graph_nodes",), part="list_graph"),
        Check("graph_edges", 2, "one (consumer, producer) edge per input", probe_graph_edges, judge_graph_edges,
              needs=("graph_nodes",), part="list_graph"),
        Check("graph_deep", 1, "a 10,000-deep chain without recursion", probe_graph_deep, judge_graph_deep,
              needs=("graph_nodes",), part="list_graph"),
        Check("graph_diamonds", 1, "30 stacked diamonds: each node visited once", probe_graph_diamonds,
              judge_graph_diamonds, needs=("graph_nodes",), part="list_graph"),
        Check("graph_real", 1, "the real graph of a minigrad expression", probe_graph_real, judge_graph_real,
              needs=("graph_edges",), part="list_graph"),
    ),
    reference=reference,
)
