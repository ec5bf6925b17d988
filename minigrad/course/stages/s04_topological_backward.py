"""Stage 04: a topological order of the graph, and the backward pass that walks it.

The learner writes ``topological_order(root)`` and
``run_backward(root, grad, retain_graph=False)`` over minigrad's real nodes.
The order is probed on stand-in nodes (``ProbeNode``) that count how often they
are visited, so an order without a visited set is caught by its visit count,
not by waiting for 2**30 paths.
"""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.autograd import engine
from minigrad.course import probe_graphs
from minigrad.course.checks import Check, Stage, Verdict, clip, close, fmt


def small_graph(rng: np.random.Generator) -> dict[str, list[str]]:
    """loss = sum(a*b + exp(a*b)) * c, with the leaves shuffled: a diamond and a fan-in."""
    leaves = ["AccumulateGrad(a)", "AccumulateGrad(b)", "AccumulateGrad(c)"]
    rng.shuffle(leaves)
    return {
        "MulBackward0(loss)": ["SumBackward0", leaves[2]],
        "SumBackward0": ["AddBackward0"],
        "AddBackward0": ["MulBackward0(ab)", "ExpBackward0"],
        "ExpBackward0": ["MulBackward0(ab)"],
        "MulBackward0(ab)": [leaves[0], leaves[1]],
    }


def square_graph(rng: np.random.Generator) -> dict[str, list[str]]:
    """loss = (h * h).sum() with h = a * b: one node uses the same producer twice (two edges)."""
    leaves = ["AccumulateGrad(a)", "AccumulateGrad(b)"]
    rng.shuffle(leaves)
    return {"SumBackward0": ["MulBackward0(h*h)"], "MulBackward0(h*h)": ["MulBackward0(h)", "MulBackward0(h)"],
            "MulBackward0(h)": leaves}


def random_dag(rng: np.random.Generator, size: int) -> dict[str, list]:
    """A random graph with diamonds and shared subgraphs: node i's producers are drawn from the nodes after
    it, each node has a consumer before it (so all are reachable from node0), some edges are doubled (like
    h * h), and some inputs are None (an input that needs no gradient)."""
    names = [f"node{i}" for i in range(size)]
    edges: dict[str, list] = {name: [] for name in names}
    for i in range(1, size):
        for j in rng.choice(i, size=min(i, int(rng.integers(1, 4))), replace=False):  # consumers of node i
            edges[names[j]].append(names[i])
            if rng.random() < 0.15:
                edges[names[j]].append(names[i])  # used twice by the same node
    for name in names:
        if edges[name] and rng.random() < 0.2:
            edges[name].insert(int(rng.integers(0, len(edges[name]) + 1)), None)
        order = rng.permutation(len(edges[name]))
        edges[name] = [edges[name][k] for k in order]
    return {name: producers for name, producers in edges.items() if producers}


def probe_graphs_of(rng: np.random.Generator) -> list[tuple[str, dict]]:
    graphs = [("loss = sum(a*b + exp(a*b)) * c", small_graph(rng)), ("loss = (h * h).sum()", square_graph(rng))]
    graphs += [(f"a random graph of {n} nodes with diamonds and shared subgraphs", random_dag(rng, n))
               for n in (8, 12, 16, 24)]
    return graphs


def _names(order) -> list[str]:
    return [n.name() for n in order]


# -- topological_order -----------------------------------------------------------------
def probe_order(ns: dict, rng: np.random.Generator) -> dict:
    found = []
    for title, edges in probe_graphs_of(rng):
        order = ns["topological_order"](probe_graphs.build(edges))
        found.append({"title": title, "order": _names(order),
                      "edges": [[c, p] for c, ps in edges.items() for p in ps if p is not None]})
    return {"graphs": found}


def _children(edges: list) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {}
    for consumer, producer in edges:
        children.setdefault(consumer, []).append(producer)
    return children


def _walks(edges: list, root: str) -> list[tuple[str, list[str]]]:
    """The orders that common wrong walks give on a graph: known mistakes the feedback can name."""
    children = _children(edges)
    walks = []
    order, seen, stack = [], {root}, [root]  # a depth-first preorder with a visited set (a stack)
    while stack:
        node = stack.pop()
        order.append(node)
        for child in children.get(node, []):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    walks.append(("a depth-first preorder", order))
    order, seen = [], set()  # a recursive depth-first preorder

    def visit(node):
        seen.add(node)
        order.append(node)
        for child in children.get(node, []):
            if child not in seen:
                visit(child)
    visit(root)
    walks.append(("a depth-first preorder", order))
    order, seen, queue = [], {root}, [root]  # breadth first with a visited set
    while queue:
        node = queue.pop(0)
        order.append(node)
        for child in children.get(node, []):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    walks.append(("a breadth-first order", order))
    return walks


def _diagnosis(graph: dict) -> str:
    """Which known wrong walk the learner's order is, if any, and why that walk is wrong."""
    order, edges = graph["order"], graph["edges"]
    root = edges[0][0] if edges else (order[0] if order else "")
    for name, walk in _walks(edges, root):
        if order == walk:
            return (f" Your order is {name}: it lists a node when it first reaches it, but a node with "
                    "several consumers can be reached through one of them before the others are listed (a "
                    "diamond), and then its gradient would be used before it is complete.")
    return ""


def judge_complete(mine: dict, ref: dict) -> Verdict:
    for graph, expected_graph in zip(mine["graphs"], ref["graphs"]):
        order, expected, title = graph["order"], expected_graph["order"], graph["title"]
        repeated = sorted({n for n in order if order.count(n) > 1})
        if repeated:
            return Verdict(False, f"on {title}, {repeated[0]} appears {order.count(repeated[0])} times in your order: "
                                  "a node reachable along several paths must be listed once (keep a set of visited "
                                  "nodes, and list a node only once)")
        missing = [n for n in expected if n not in order]
        if missing:
            doubled = {p for c, p in expected_graph["edges"]
                       if expected_graph["edges"].count([c, p]) > 1}
            if missing[0] in doubled or any(n in doubled for n in missing):
                return Verdict(False, f"on {title}, your order leaves out {missing[0]}. A node can use the same "
                                      "input twice (h * h: two edges from one consumer to MulBackward0(h)); count "
                                      "one consumer per edge, and take one away per edge, so that each count "
                                      "reaches zero exactly once")
            return Verdict(False, f"on {title}, your order leaves out {missing[0]}: follow next_functions from every "
                                  "node, all the way down to the AccumulateGrad leaves")
        if len(order) != len(expected):
            return Verdict(False, f"on {title}, your order has {len(order)} nodes; the graph has {len(expected)}")
    return Verdict(True)


def judge_topological(mine: dict, ref: dict) -> Verdict:
    for graph, expected_graph in zip(mine["graphs"], ref["graphs"]):
        position = {n: i for i, n in enumerate(graph["order"])}
        for consumer, producer in expected_graph["edges"]:
            if position[producer] < position[consumer]:
                return Verdict(False, f"on {graph['title']}, your order visits {producer} before {consumer}, which "
                                      f"consumes it: {producer}'s gradient would be incomplete when it runs. A node "
                                      "may run only after every node that uses its output (count each node's "
                                      "consumers first)." + _diagnosis(expected_graph | {"order": graph["order"]}))
    return Verdict(True)


def probe_deep_chain(ns: dict, rng: np.random.Generator) -> dict:
    depth = 10_000
    edges = {f"node{i}": [f"node{i + 1}"] for i in range(depth)}
    try:
        order = ns["topological_order"](probe_graphs.build(edges))
    except RecursionError:
        return {"recursion": True}
    return {"recursion": False, "in_order": _names(order) == [f"node{i}" for i in range(depth + 1)]}


def judge_deep_chain(mine: dict, ref: dict) -> Verdict:
    if mine["recursion"]:
        return Verdict(False, "a chain 10,000 nodes deep hit Python's recursion limit: your order recurses once "
                              "per node. Use a loop with an explicit stack (a list you append to and pop from)")
    if not mine["in_order"]:
        return Verdict(False, "on a plain chain your order is not node0, node1, ..., node10000")
    return Verdict(True)


def probe_diamonds(ns: dict, rng: np.random.Generator) -> dict:
    levels = 30  # 2**30 paths from top to bottom, but only 3 * 30 + 1 nodes
    edges = {}
    for i in range(levels):
        edges[f"join{i}"] = [f"left{i}", f"right{i}"]
        edges[f"left{i}"] = [f"join{i + 1}"]
        edges[f"right{i}"] = [f"join{i + 1}"]
    try:
        order = ns["topological_order"](probe_graphs.build(edges, budget_factor=20))
    except probe_graphs.Exploded:
        return {"exploded": True}
    return {"exploded": False, "count": len(order)}


def judge_diamonds(mine: dict, ref: dict) -> Verdict:
    if mine["exploded"]:
        return Verdict(False, "on 30 stacked diamonds (91 nodes, 2**30 paths) your order kept revisiting nodes "
                              "and never finished: mark each node visited the first time you reach it, and skip it after")
    if mine["count"] != ref["count"]:
        return Verdict(False, f"on 30 stacked diamonds your order has {mine['count']} nodes, expected {ref['count']}")
    return Verdict(True)


# -- run_backward ------------------------------------------------------------------------
def _leaves(rng: np.random.Generator, *shapes):
    return [minigrad.tensor(rng.standard_normal(s), dtype=minigrad.float64, requires_grad=True) for s in shapes]


class _TwoOutputs(minigrad.autograd.Function):
    """A node with two outputs, (2x, 3x): run_backward must hand it one gradient per output."""

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g0, g1=None):  # g1=None: a pass that hands over output 0 only gets a number to judge
        return (0 if g0 is None else g0 * 2) + (0 if g1 is None else g1 * 3)


class _NoGradientForB(minigrad.autograd.Function):
    """f(a, b) = 2a, whose backward returns None for b: b's node then receives no gradient at all."""

    @staticmethod
    def forward(ctx, a, b):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2, None


def probe_simple(ns: dict, rng: np.random.Generator) -> dict:
    x, y, z = _leaves(rng, (3,), (3,), (3,))
    loss = (x * y + z).sum()
    ns["run_backward"](loss.grad_fn, minigrad.tensor(1.0, dtype=minigrad.float64))
    recorded = any(t.grad is not None and t.grad.grad_fn is not None for t in (x, y, z))
    w, = _leaves(rng, (3,))
    doubled, tripled = _TwoOutputs.apply(w)
    ns["run_backward"]((doubled * tripled).sum().grad_fn, minigrad.tensor(1.0, dtype=minigrad.float64))
    u, v = _leaves(rng, (3,), (3,))
    ns["run_backward"](_NoGradientForB.apply(u, v * 3).sum().grad_fn, minigrad.tensor(1.0, dtype=minigrad.float64))
    with minigrad.no_grad():  # known mistakes' results, trusted only from the reference run
        only_first = tripled * 2  # only output 0's gradient (3w) reaches the node: 2 * 3w
        only_second = doubled * 3
    return {"x": x.grad, "y": y.grad, "z": z.grad, "recorded": recorded, "w": w.grad, "u": u.grad, "v": v.grad,
            "w_only_output_0": only_first, "w_only_output_1": only_second}


def judge_simple(mine: dict, ref: dict) -> Verdict:
    for name in ("x", "y", "z"):
        if mine[name] is None:
            return Verdict(False, f"after run_backward on (x * y + z).sum(), {name}.grad is None: every node's "
                                  "gradients must reach the AccumulateGrad nodes, which you call like any other node")
        if not close(mine[name], ref[name]):
            return Verdict(False, f"(x * y + z).sum() gave {name}.grad = {fmt(mine[name])}, expected {fmt(ref[name])}")
    if mine["recorded"]:
        return Verdict(False, "the gradients are right, but x.grad has a grad_fn: the backward formulas were recorded "
                              "as a new graph. Run the nodes inside `with minigrad.no_grad():`")
    if mine["w"] is None or not close(mine["w"], ref["w"]):
        said = (f"through a node with two outputs (a, b = f(w), both used: (a * b).sum()), w.grad = {fmt(mine['w'])}, "
                f"expected {fmt(ref['w'])}")
        for k in (0, 1):
            if mine["w"] is not None and close(mine["w"], ref[f"w_only_output_{k}"]):
                return Verdict(False, f"{said}: only output {k}'s gradient reached the node. Call each node with one "
                                      "gradient per output, in output order (None for an output that got none): "
                                      "node(*[grads.get(i) for i in range(node.num_outputs)])")
        return Verdict(False, said)
    if mine["u"] is None or not close(mine["u"], ref["u"]) or mine["v"] is not None:
        return Verdict(False, f"for f(u, v * 3).sum(), where f's backward returns (2 * g, None), u.grad = "
                              f"{fmt(mine['u'])} (expected {fmt(ref['u'])}) and v.grad = {fmt(mine['v'])} (expected "
                              "None): no gradient reaches v * 3's node, so it must not run, and v gets none")
    return Verdict(True)


def probe_accumulates(ns: dict, rng: np.random.Generator) -> dict:
    value = float(rng.integers(2, 6))
    a = minigrad.tensor(value, dtype=minigrad.float64, requires_grad=True)
    b, = _leaves(rng, (4,))
    try:
        ns["run_backward"]((a * a).grad_fn, minigrad.tensor(1.0, dtype=minigrad.float64))
        h = b * 2
        loss = (h * h.exp() + h).sum()  # h feeds three consumers
        ns["run_backward"](loss.grad_fn, minigrad.tensor(1.0, dtype=minigrad.float64))
    except RuntimeError as e:
        if "in-place" in str(e) or "written-to tensor" in str(e):
            return {"a": value, "inplace": str(e)[:200]}
        raise
    return {"a": value, "a_grad": a.grad, "b_grad": b.grad, "inplace": None}


INPLACE_WHY = ("add out of place (gradient so far + new gradient, a new tensor): a node's backward may hand "
               "one tensor to several "
               "inputs (AddBackward0 passes grad_output on, unchanged, to both), or return a broadcast view whose "
               "elements share memory (SumBackward0's expand), so `+=` would change a gradient another node still "
               "holds, or cannot write at all")


def judge_accumulates(mine: dict, ref: dict) -> Verdict:
    if mine.get("inplace"):
        return Verdict(False, f"your run_backward adds gradients in place (`+=`) and minigrad refused: "
                              f"\"{mine['inplace'][:120]}\". When a tensor is used several times, {INPLACE_WHY}")
    a = mine["a"]
    if mine["a_grad"] is None or not close(mine["a_grad"], ref["a_grad"]):
        said = f"c = a * a with a = {a:g} gave a.grad = {fmt(mine['a_grad'])}, expected {fmt(ref['a_grad'])}"
        if mine["a_grad"] is not None and close(mine["a_grad"], a):  # one of the two gradients a * a sends
            return Verdict(False, f"{said}: one of the two gradients that reach a's node was kept and the other "
                                  "lost. When a tensor is used twice, add the incoming gradients instead of overwriting")
        return Verdict(False, f"{said}. MulBackward0 sends a gradient to each of its inputs, here twice to a's node: "
                              "a node's gradient is the sum of all that reach it")
    if mine["b_grad"] is None or not close(mine["b_grad"], ref["b_grad"]):
        return Verdict(False, f"with h = b * 2 used three times, b.grad = {fmt(mine['b_grad'])}, expected "
                              f"{fmt(ref['b_grad'])}: sum every gradient that reaches a node before running it")
    return Verdict(True)


def probe_frees(ns: dict, rng: np.random.Generator) -> dict:
    x, y = _leaves(rng, (3,), (3,))
    loss = (x.exp() * y).sum()
    one = minigrad.tensor(1.0, dtype=minigrad.float64)
    ns["run_backward"](loss.grad_fn, one)
    try:
        ns["run_backward"](loss.grad_fn, one)
    except RuntimeError as e:
        return {"second_raises": True, "mentions_retain": "retain_graph" in str(e)}
    return {"second_raises": False}


def judge_frees(mine: dict, ref: dict) -> Verdict:
    if not mine["second_raises"]:
        return Verdict(False, "a second run_backward through the same graph still worked, so the saved tensors were "
                              "never freed: call node.release_variables() right after each node runs, unless retain_graph=True")
    return Verdict(True)


def probe_retain(ns: dict, rng: np.random.Generator) -> dict:
    x, y = _leaves(rng, (3,), (3,))
    loss = (x.exp() * y).sum()
    one = minigrad.tensor(1.0, dtype=minigrad.float64)
    ns["run_backward"](loss.grad_fn, one, retain_graph=True)
    first = x.grad.detach().clone()
    try:
        ns["run_backward"](loss.grad_fn, one, retain_graph=True)
    except RuntimeError as e:
        return {"raised": clip(str(e), 300)}
    return {"raised": None, "first": first, "second": x.grad}


def judge_retain(mine: dict, ref: dict) -> Verdict:
    if mine["raised"] is not None:
        return Verdict(False, f"with retain_graph=True a second run_backward raised: {mine['raised']}. "
                              "Only free saved tensors when retain_graph is False")
    if not close(mine["second"], ref["second"]):
        return Verdict(False, f"after two passes with retain_graph=True, x.grad = {fmt(mine['second'])}, expected "
                              f"{fmt(ref['second'])} (twice the first pass: leaf gradients accumulate)")
    return Verdict(True)


def probe_drives_engine(ns: dict, rng: np.random.Generator) -> dict:
    """The learner's order plugged into minigrad's real engine, on an MLP's loss (with a diamond)."""
    w1, b1, w2 = _leaves(rng, (4, 8), (8,), (8, 3))
    x = minigrad.tensor(rng.standard_normal((5, 4)))
    target = minigrad.tensor(rng.integers(0, 3, 5))
    learner_order = ns["topological_order"]
    with engine.use_order(lambda roots: learner_order(roots[0])):
        h = x.double() @ w1 + b1
        logits = (h.relu() + h.tanh() * 0.5) @ w2  # h feeds two consumers: a diamond
        loss = -logits.log_softmax(1)[minigrad.arange(5), target].mean()
        loss.backward()
    return {"w1": w1.grad, "b1": b1.grad, "w2": w2.grad}


def judge_drives_engine(mine: dict, ref: dict) -> Verdict:
    for name in ("w1", "b1", "w2"):
        if mine[name] is None or not close(mine[name], ref[name]):
            return Verdict(False, f"with your order driving minigrad's engine, an MLP's {name}.grad is "
                                  f"{fmt(mine[name])}, expected {fmt(ref[name])}")
    return Verdict(True)


def reference() -> dict:
    def topological_order(root):
        return engine.topological_order([root])

    def run_backward(root, grad, retain_graph=False):
        engine.run_backward([(root, 0)], [grad], retain_graph=retain_graph, create_graph=False)

    return {"topological_order": topological_order, "run_backward": run_backward}


# The mistakes the feedback names (issue 28): each phrase appears only when the learner's results are those
# of that mistake on the check's inputs. tests/course/test_mutants.py checks that no catalogued mutant is told
# another's.
DIAGNOSES = {
    "depth_first_preorder": "Your order is a depth-first preorder",
    "breadth_first": "Your order is a breadth-first order",
    "releases_once_per_consumer": "count one consumer per edge",
    "recursion": "hit Python's recursion limit",
    "no_visited_set": "kept revisiting nodes",
    "only_output_0": "only output 0's gradient reached the node",
    "only_output_1": "only output 1's gradient reached the node",
    "overwrites": "instead of overwriting",
    "accumulates_in_place": "adds gradients in place",
    "records_the_backward": "the backward formulas were recorded",
    "never_frees": "so the saved tensors were",
    "always_frees": "with retain_graph=True a second run_backward raised",
}

STAGE = Stage(
    number="04",
    name="topological_backward",
    title="Topological order and the backward pass",
    parts={"topological_order": ("topological_order",), "run_backward": ("run_backward",)},
    checks=(
        Check("order_complete", 1, "lists every node exactly once", probe_order, judge_complete,
              part="topological_order"),
        Check("order_topological", 2, "each node comes after all of its consumers", probe_order,
              judge_topological, needs=("order_complete",), part="topological_order"),
        Check("order_deep_chain", 1, "a 10,000-deep chain without recursion", probe_deep_chain,
              judge_deep_chain, needs=("order_topological",), part="topological_order"),
        Check("order_diamonds", 1, "30 stacked diamonds: each node visited once", probe_diamonds,
              judge_diamonds, needs=("order_topological",), part="topological_order"),
        Check("backward_simple", 1, "gradients of (x * y + z).sum(), and through a node with two outputs",
              probe_simple, judge_simple,
              part="run_backward"),
        Check("backward_accumulates", 2, "a tensor used several times gets the sum of its gradients",
              probe_accumulates, judge_accumulates, needs=("backward_simple",), part="run_backward"),
        Check("backward_frees", 1, "saved tensors are freed unless retain_graph", probe_frees, judge_frees,
              needs=("backward_simple",), part="run_backward"),
        Check("backward_retain_graph", 1, "retain_graph=True allows a second pass", probe_retain, judge_retain,
              needs=("backward_simple",), part="run_backward"),
        Check("order_drives_engine", 1, "your order drives minigrad's engine on an MLP", probe_drives_engine,
              judge_drives_engine, needs=("order_topological",), part="topological_order"),
    ),
    reference=reference,
)
