"""Draw the graph that autograd recorded: one box per node, inputs on the left.

Three pure steps, each testable without a display, then the drawing:

1. ``graph_of(t)``: the nodes reachable from ``t.grad_fn`` and the edges
   between them, pointing the way values flowed (input -> consumer).
2. ``layers(nodes, edges)``: a column for every node, so that every edge goes
   left to right. A node sits just left of its first consumer, so a weight is
   drawn next to the layer that uses it, not far away with the data.
3. ``label(node)``: the text in a node's box.

The nodes are the engine's own objects: a Function node such as
``MulBackward0``, or the ``AccumulateGrad`` node at the end of a leaf, which
we draw as the leaf itself (its name, shape and, if asked, value and grad).
"""
from __future__ import annotations

import collections
import inspect
from typing import Hashable, Iterable, Sequence

from minigrad.autograd import engine
from minigrad.autograd.graph import AccumulateGrad, Node
from minigrad.nn.module import Module
from minigrad.tensor import Tensor
from minigrad.viz import style

MAX_NODES = 200  # above this a drawing is a hairball: draw_graph shows a summary instead
MAX_DEPTH = 40  # columns: a longer chain would make a figure metres wide


def graph_of(tensor: Tensor) -> tuple[list[Node], list[tuple[Node, Node]]]:
    """The recorded graph of ``tensor``: ``(nodes, edges)``, edges as ``(input, consumer)``.

    Nodes come inputs first (the reverse of the engine's order); an edge used
    twice (``x * x``) is listed once. A tensor without ``grad_fn`` gives its
    leaf alone, or nothing if it does not require grad.
    """
    if tensor.grad_fn is None:
        return ([tensor._edge()[0]], []) if tensor.requires_grad else ([], [])
    nodes = engine.topological_order([tensor.grad_fn])[::-1]
    edges = {}  # a dict keeps the first-seen order and drops repeats
    for node in nodes:
        for child, _ in node.next_functions:
            if child is not None:
                edges[(child, node)] = None
    return nodes, list(edges)


def layers(nodes: Sequence[Hashable], edges: Iterable[tuple[Hashable, Hashable]]) -> dict:
    """``{node: column}``, 0 at the left, so that every edge ``(a, b)`` has ``column[a] < column[b]``.

    A node's column is one less than the leftmost of its consumers; the nodes
    nobody consumes (the output) share the last column.
    """
    consumers = {node: [] for node in nodes}
    pending = {node: 0 for node in nodes}  # how many inputs each node waits for
    for a, b in edges:
        consumers[a].append(b)
        pending[b] += 1
    order = [node for node in nodes if pending[node] == 0]  # Kahn's algorithm, inputs first
    for node in order:
        for consumer in consumers[node]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                order.append(consumer)
    steps_to_end = {}  # the longest path from each node to an output
    for node in reversed(order):
        steps_to_end[node] = 1 + max((steps_to_end[c] for c in consumers[node]), default=-1)
    depth = max(steps_to_end.values(), default=0)
    return {node: depth - steps for node, steps in steps_to_end.items()}


def label(node: Node, names: dict[str, Tensor] | None = None, show_values: bool = False) -> str:
    """The text of a node's box: its PyTorch name, or for a leaf its name and shape.

    ``names`` maps variable names to tensors, so that boxes can say ``w``
    rather than ``AccumulateGrad``; a Function node shows the name of the
    tensor it produced, if that tensor is named.
    """
    names = names or {}
    if isinstance(node, AccumulateGrad):
        leaf = node.variable
        lines = [_name_of(leaf, names) or "leaf", _shape(leaf)]
        if show_values:
            lines.append("value " + style.short(leaf._data))
            if leaf._grad is not None:
                lines.append("grad " + style.short(leaf._grad._data))
        return "\n".join(lines)
    produced = [n for n, t in names.items() if isinstance(t, Tensor) and t.grad_fn is node]
    lines = [node.name()] + ([produced[0]] if produced else [])
    if show_values and produced:
        lines.append("value " + style.short(names[produced[0]]._data))
    return "\n".join(lines)


def _name_of(tensor: Tensor, names: dict[str, Tensor]) -> str | None:
    return next((n for n, t in names.items() if t is tensor), None)


def _shape(tensor: Tensor) -> str:
    return "scalar" if tensor.ndim == 0 else "shape " + "×".join(map(str, tensor.shape))


def caller_names(frame) -> dict[str, Tensor]:
    """The tensors the caller can see by name (its globals, then its locals win).

    A model's parameters are named after it (``model.0.weight``). Names
    starting with ``_`` are skipped: IPython keeps old outputs in ``_``,
    ``_3`` and so on, which would hide the names the learner chose.
    """
    names = {}
    for name, value in {**frame.f_globals, **frame.f_locals}.items():
        if name.startswith("_"):
            continue
        if isinstance(value, Tensor):
            names[name] = value
        elif isinstance(value, Module):
            names.update((f"{name}.{p}", t) for p, t in value.named_parameters())
    return names


# -- placing the boxes ----------------------------------------------------------------------
def rows(nodes: Sequence, edges: Sequence[tuple], column: dict) -> dict:
    """``{node: row}`` within its column, ordered to uncross edges (the barycenter heuristic).

    Each sweep sorts every column by the mean row of the node's neighbours in
    other columns, right to left then left to right; four sweeps are plenty.
    """
    by_column = collections.defaultdict(list)
    for node in nodes:
        by_column[column[node]].append(node)
    neighbours = collections.defaultdict(list)
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    row = {}
    for members in by_column.values():
        row.update(_centred(members))
    columns = sorted(by_column)
    for sweep in range(4):
        for c in (columns[::-1] if sweep % 2 == 0 else columns):
            def mean_neighbour(node):
                placed = [row[n] for n in neighbours[node] if column[n] != c]
                return sum(placed) / len(placed) if placed else row[node]
            by_column[c].sort(key=mean_neighbour)
            row.update(_centred(by_column[c]))
    return row


def _centred(members: list) -> dict:
    return {node: i - (len(members) - 1) / 2 for i, node in enumerate(members)}


# -- drawing --------------------------------------------------------------------------------
CHAR_WIDTH = 0.12  # inches per character at style.FONT_SIZE - 1 points (generous, for the widest letters)
LINE_HEIGHT = 0.27  # inches per line of text
COLUMN_GAP = 0.7  # inches between the boxes of neighbouring columns
ROW_GAP = 0.35

FILL = {"leaf": "#DCEEFB", "function": "#F2F2F2", "current": style.ORANGE, "done": "#BFE8DC"}
EDGE = {"leaf": style.BLUE, "function": style.GREY, "current": style.VERMILION, "done": style.GREEN}


def draw_graph(
    tensor: Tensor,
    show_values: bool = False,
    names: dict[str, Tensor] | None = None,
    *,
    highlight: dict[Node, str] | None = None,
    notes: dict[Node, str] | None = None,
    max_nodes: int = MAX_NODES,
    max_depth: int = MAX_DEPTH,
):
    """Draw ``tensor``'s recorded graph left to right and return the matplotlib Figure
    (Jupyter shows it when it is a cell's last value).

    ``names`` defaults to the caller's variables. ``highlight`` maps nodes to
    ``"current"`` or ``"done"`` and ``notes`` adds a line to a node's box (the
    backward stepper uses both). Graphs of more than ``max_nodes`` nodes or
    ``max_depth`` columns are summarised instead of drawn.
    """
    if names is None:
        names = caller_names(inspect.currentframe().f_back)
    nodes, edges = graph_of(tensor)
    with style.styled():
        if not nodes:
            return _message("No graph: this tensor does not require grad.\n"
                            "Create its inputs with requires_grad=True.")
        column = layers(nodes, edges)
        if len(nodes) > max_nodes or max(column.values()) >= max_depth:
            return draw_summary(nodes, edges, f"more than {max_nodes} nodes or {max_depth} columns")
        return _draw(nodes, edges, column, names, show_values, highlight or {}, notes or {})


def _draw(nodes, edges, column, names, show_values, highlight, notes):
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    row = rows(nodes, edges, column)
    texts = {n: label(n, names, show_values) + (f"\n{notes[n]}" if n in notes else "") for n in nodes}
    size = {n: (CHAR_WIDTH * max(map(len, t.split("\n"))) + 0.3, LINE_HEIGHT * (t.count("\n") + 1) + 0.2)
            for n, t in texts.items()}
    n_columns = max(column.values()) + 1
    widths = [max(size[n][0] for n in nodes if column[n] == c) for c in range(n_columns)]
    lefts = [sum(widths[:c]) + COLUMN_GAP * c for c in range(n_columns)]
    row_height = max(h for _, h in size.values()) + ROW_GAP
    x = {n: lefts[column[n]] + widths[column[n]] / 2 for n in nodes}
    y = {n: -row[n] * row_height for n in nodes}  # row 0 at the top

    width = sum(widths) + COLUMN_GAP * (n_columns - 1)
    height = row_height * (max(row.values()) - min(row.values()) + 1)
    fig = style.new_figure(width + 0.4, height + 0.4)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(-0.2, width + 0.2)
    ax.set_ylim(min(y.values()) - row_height / 2 - 0.2, max(y.values()) + row_height / 2 + 0.2)
    ax.axis("off")

    for a, b in edges:
        # An edge that skips a column would run straight behind the boxes in between: bend it.
        skips = abs(column[b] - column[a]) > 1
        ax.add_patch(FancyArrowPatch(
            (x[a] + size[a][0] / 2, y[a]), (x[b] - size[b][0] / 2, y[b]),
            arrowstyle="-|>", mutation_scale=18, color=style.GREY, linewidth=1.5, zorder=1,
            connectionstyle=f"arc3,rad={-0.35 if skips else 0}", gid="edge",
        ))
    for node in nodes:
        kind = highlight.get(node) or ("leaf" if isinstance(node, AccumulateGrad) else "function")
        w, h = size[node]
        ax.add_patch(FancyBboxPatch(
            (x[node] - w / 2, y[node] - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.1",
            facecolor=FILL[kind], edgecolor=EDGE[kind], linewidth=4 if kind == "current" else 2,
            linestyle="--" if kind == "done" else "-", zorder=2, gid=f"node:{kind}",
        ))
        ax.text(x[node], y[node], texts[node], ha="center", va="center", zorder=3,
                fontsize=style.FONT_SIZE - 1, fontweight="bold" if kind == "current" else "normal",
                family="DejaVu Sans")
    return fig


def draw_summary(nodes: Sequence[Node], edges: Sequence[tuple], why: str = "too large"):
    """A chart of what a large graph holds, instead of a drawing nobody could read."""
    kinds = collections.Counter("leaf" if isinstance(n, AccumulateGrad) else n.name() for n in nodes)
    with style.styled():
        fig = style.new_figure(11, 5)
        ax = fig.add_axes([0.3, 0.12, 0.65, 0.62])
        common = kinds.most_common(8)[::-1]
        ax.barh([k for k, _ in common], [v for _, v in common], color=style.BLUE)
        ax.set_xlabel("number of nodes")
        fig.text(0.02, 0.95, summary_text(nodes, edges), va="top", fontsize=style.FONT_SIZE + 1)
        fig.text(0.02, 0.83, f"Too large to draw ({why}). The most common nodes:", va="top", color=style.GREY)
    return fig


def summary_text(nodes: Sequence[Node], edges: Sequence[tuple]) -> str:
    """One line describing a graph: its size, depth, width and leaves."""
    column = layers(nodes, edges)
    widest = max(collections.Counter(column.values()).values(), default=0)
    leaves = sum(isinstance(n, AccumulateGrad) for n in nodes)
    depth = max(column.values(), default=-1) + 1
    return f"{len(nodes)} nodes, {len(edges)} edges, depth {depth}, widest layer {widest}, {leaves} leaves"


def _message(text: str):
    fig = style.new_figure(7, 1.2)
    fig.text(0.5, 0.5, text, ha="center", va="center")
    return fig
