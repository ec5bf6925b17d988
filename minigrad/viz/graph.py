"""Draw the graph that autograd recorded: one box per node, inputs first.

Three pure steps, each testable without a display, then the layout and the SVG:

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
import html
import inspect
from typing import Hashable, Iterable, NamedTuple, Sequence

from minigrad.autograd import engine
from minigrad.autograd.graph import AccumulateGrad, Node
from minigrad.nn.module import Module
from minigrad._tensor import Tensor
from minigrad.viz import style


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
# Drawn as SVG text: vector output stays sharp when a projector scales it, and text sizes are
# exact pixels. Boxes use a monospace font, so a label's width is known without a renderer.
SIZES = {  # size= preset -> (font size in px, the width the drawing must fit in px)
    "notebook": (15, 860),  # about a JupyterLab cell at 100%; still >= 12 px text shown at 700 px
    "lecture": (20, 860),  # for a projector: bigger text, so larger graphs go top to bottom sooner
}
CHAR = 0.6  # width of one monospace character, in font sizes (DejaVu Sans Mono, Menlo, Consolas)
PAD = 8  # px between a box's text and its border
GAP = 28  # px between neighbouring ranks (columns or rows) and between boxes of one rank
MAX_NODES = 200  # above this a drawing is a hairball: draw_graph shows a summary instead
MAX_DEPTH = 40  # ranks: a longer chain would be metres long whichever way it is laid out
TEXT = "#222222"  # text colour: contrast 16:1 on white
MUTED = "#555555"  # secondary text: contrast 7.5:1 on white (the old #999 was 2.8:1)

FILL = {"leaf": "#DCEEFB", "function": "#F2F2F2", "current": style.ORANGE, "done": "#BFE8DC"}
EDGE = {"leaf": style.BLUE, "function": "#777777", "current": style.VERMILION, "done": style.GREEN}


class Box(NamedTuple):
    """Where a node is drawn: centre ``(x, y)``, size ``(w, h)`` in px."""

    x: float
    y: float
    w: float
    h: float


class GraphPicture:
    """A drawn graph: SVG that Jupyter shows inline, and the geometry behind it.

    ``boxes`` maps each node to its ``Box`` and ``edges`` maps each ``(input, consumer)``
    pair to the points of its arrow, so tests (and curious readers) can check the
    layout without a browser. ``render(highlight, notes)`` redraws the same boxes
    with other colours and notes: the backward stepper uses it, so its picture does
    not move between steps.
    """

    def __init__(self, nodes, texts: dict, boxes: dict[Node, Box], edges: dict, width: float, height: float,
                 font: int, direction: str) -> None:
        self.nodes, self.texts, self.boxes, self.edges = nodes, texts, boxes, edges
        self.width, self.height, self.font, self.direction = width, height, font, direction
        self.highlight: dict = {}
        self.notes: dict = {}
        self.svg = self.render()

    def kind(self, node: Node) -> str:
        return self.highlight.get(node) or ("leaf" if isinstance(node, AccumulateGrad) else "function")

    def lines(self, node: Node) -> list[str]:
        return self.texts[node].split("\n") + ([self.notes[node]] if node in self.notes else [])

    def render(self, highlight: dict | None = None, notes: dict | None = None) -> str:
        """The SVG with ``highlight`` (node -> "current"/"done") and ``notes`` (node -> one more line)."""
        self.highlight, self.notes = highlight or {}, notes or {}
        parts = [_svg_open(self.width, self.height, self.font),
                 "<defs><marker id='mg-arrow' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='7' "
                 "markerHeight='7' orient='auto-start-reverse'><path d='M0,0 L10,5 L0,10 z' fill='#777'/>"
                 "</marker></defs><g transform='translate(3 3)'>"]  # room for the widest border
        for points in self.edges.values():
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            parts.append(f"<polyline class='edge' points='{path}' fill='none' stroke='#777' stroke-width='2' "
                         "marker-end='url(#mg-arrow)'/>")
        line_height = self.font * 1.25
        for node in self.nodes:
            box, kind = self.boxes[node], self.kind(node)
            dashes = " stroke-dasharray='6 4'" if kind == "done" else ""
            parts.append(
                f"<rect class='node {kind}' x='{box.x - box.w / 2:.1f}' y='{box.y - box.h / 2:.1f}' "
                f"width='{box.w:.1f}' height='{box.h:.1f}' rx='8' fill='{FILL[kind]}' stroke='{EDGE[kind]}' "
                f"stroke-width='{4 if kind == 'current' else 2}'{dashes}/>")
            lines = self.lines(node)
            top = box.y - line_height * (len(lines) - 1) / 2
            weight = " font-weight='bold'" if kind == "current" else ""
            for i, line in enumerate(lines):
                parts.append(f"<text x='{box.x:.1f}' y='{top + i * line_height:.1f}' text-anchor='middle' "
                             f"dominant-baseline='central'{weight}>{html.escape(line)}</text>")
        parts.append("</g></svg>")
        self.svg = "".join(parts)
        return self.svg

    def save(self, path: str) -> None:
        """Write the SVG to ``path`` (open it in a browser, or put it in slides)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg)

    def _repr_html_(self) -> str:
        return f"<div class='minigrad-graph'>{self.svg}</div>"


def _svg_open(width: float, height: float, font: int) -> str:
    """An ``<svg>`` that keeps its size where it fits, and shrinks evenly where it does not."""
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {width:.0f} {height:.0f}' style='max-width:100%;height:auto' "
            f"font-family='DejaVu Sans Mono, Menlo, Consolas, monospace' font-size='{font}' fill='{TEXT}'>")


def draw_graph(
    tensor: Tensor,
    show_values: bool = False,
    names: dict[str, Tensor] | None = None,
    *,
    highlight: dict[Node, str] | None = None,
    notes: dict[Node, str] | None = None,
    size: str = "notebook",
    max_nodes: int = MAX_NODES,
    max_depth: int = MAX_DEPTH,
):
    """Draw ``tensor``'s recorded graph, inputs first, and return it as a ``GraphPicture``
    (Jupyter shows it when it is a cell's last value; ``.save("g.svg")`` writes it).

    The graph is laid out left to right when that fits the width of a notebook
    cell, and top to bottom otherwise, each parameter beside the operation that
    uses it. ``size="lecture"`` uses larger text for a projector. ``names``
    defaults to the caller's variables. ``highlight`` maps nodes to ``"current"``
    or ``"done"`` and ``notes`` adds a line to a node's box (the backward stepper
    uses both). A graph that cannot be drawn readably (more than ``max_nodes``
    nodes, more than ``max_depth`` steps deep, or too wide for the cell even top
    to bottom) is summarised instead.
    """
    if names is None:
        names = caller_names(inspect.currentframe().f_back)
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, not {size!r}")
    font, budget = SIZES[size]
    nodes, edges = graph_of(tensor)
    if not nodes:
        return _message("No graph: this tensor does not require grad. "
                        "Create its inputs with requires_grad=True.", font)
    texts = {n: label(n, names, show_values) for n in nodes}
    if len(nodes) > max_nodes:
        return draw_summary(nodes, edges, f"{len(nodes)} nodes, more than the {max_nodes} drawn", font)
    # Leave room for the notes: the stepper adds one line to a box, and its boxes must not move.
    sizing = {n: t + ("\n" + notes[n] if notes and n in notes else "") for n, t in texts.items()}
    picture = None
    for direction in ("LR", "TB"):
        placed = layout(nodes, edges, sizing, font, direction, max_depth)
        if placed is None:
            continue
        boxes, arrows, width, height = placed
        picture = GraphPicture(nodes, texts, boxes, arrows, width, height, font, direction)
        if width <= budget:
            break
    if picture is None:
        return draw_summary(nodes, edges, f"more than {max_depth} steps deep", font)
    if picture.width > budget:
        return draw_summary(nodes, edges, f"{picture.width:.0f} px wide even top to bottom, "
                                          f"more than the {budget} px of a notebook cell", font)
    picture.render(highlight, notes)
    return picture


def layout(nodes, edges, texts: dict, font: int, direction: str, max_depth: int = MAX_DEPTH):
    """Place every node: ``(boxes, arrows, width, height)``, or None if deeper than ``max_depth``.

    Nodes are grouped into *units* placed along *ranks*: the columns of a left-to-right
    layout, the rows of a top-to-bottom one. Top to bottom, a leaf used by one
    operation only (a layer's weight or bias) shares that operation's row, one on
    each side, so a layer reads as one line. Every box of a rank has the same
    thickness, so an arrow between neighbouring ranks crosses only the gap between
    them; an arrow that skips ranks runs around the boxes it would cross.
    """
    tb = direction == "TB"
    line = font * 1.25
    size = {n: (CHAR * font * max(map(len, t.split("\n"))) + 2 * PAD, line * (t.count("\n") + 1) + 2 * PAD)
            for n, t in texts.items()}
    # Along the rank axis a box is as thick as its rank; across it, as long as its own text.
    across = {n: size[n][0] if tb else size[n][1] for n in nodes}
    along = {n: size[n][1] if tb else size[n][0] for n in nodes}

    consumers = collections.defaultdict(list)
    for a, b in edges:
        consumers[a].append(b)
    sides: dict[Node, list] = collections.defaultdict(lambda: [[], []])  # unit -> [left, right] attachments
    attached = {}
    if tb:
        for node in nodes:
            users = consumers[node]
            if isinstance(node, AccumulateGrad) and len(users) == 1 and sum(map(len, sides[users[0]])) < 2:
                left, right = sides[users[0]]
                (left if len(left) <= len(right) else right).append(node)
                attached[node] = users[0]
    units = [n for n in nodes if n not in attached]
    unit_edges = [(attached.get(a, a), attached.get(b, b)) for a, b in edges]
    unit_edges = [(a, b) for a, b in dict.fromkeys(unit_edges) if a is not b]
    rank = layers(units, unit_edges)
    if max(rank.values()) >= max_depth:
        return None
    order = rows(units, unit_edges, rank)

    def members(unit) -> list:
        left, right = sides[unit] if unit in sides else ([], [])
        return [*left[::-1], unit, *right]

    n_ranks = max(rank.values()) + 1
    thickness = [max(along[m] for u in units if rank[u] == r for m in members(u)) for r in range(n_ranks)]
    starts = [sum(thickness[:r]) + GAP * r for r in range(n_ranks)]
    centre = {}  # node -> (position along the rank axis, position across it)
    extent = []
    for r in range(n_ranks):
        in_rank = sorted((u for u in units if rank[u] == r), key=order.get)
        cross = 0.0
        for unit in in_rank:
            for m in members(unit):
                centre[m] = (starts[r] + thickness[r] / 2, cross + across[m] / 2)
                cross += across[m] + GAP
        extent.append(cross - GAP)
    for node in nodes:  # centre every rank on the widest one
        r = rank[attached.get(node, node)]
        centre[node] = (centre[node][0], centre[node][1] + (max(extent) - extent[r]) / 2)

    skips = [(a, b) for a, b in edges if a not in attached and rank[b] - rank[a] > 1]
    margin = GAP if skips else 0  # a corridor on each side for arrows that skip ranks
    boxes = {}
    for node in nodes:
        along_pos, cross_pos = centre[node]
        r = rank[attached.get(node, node)]
        a_len, c_len = thickness[r], across[node]
        if tb:
            boxes[node] = Box(cross_pos + margin, along_pos, c_len, a_len)
        else:
            boxes[node] = Box(along_pos, cross_pos + margin, a_len, c_len)

    def point(along_pos: float, cross_pos: float) -> tuple:
        return (cross_pos, along_pos) if tb else (along_pos, cross_pos)

    def ends(node) -> tuple:  # (along start, along end, cross centre) of a box
        box = boxes[node]
        return (box.y - box.h / 2, box.y + box.h / 2, box.x) if tb else (box.x - box.w / 2, box.x + box.w / 2, box.y)

    cross_total = max(extent) + 2 * margin
    arrows = {}
    for a, b in edges:
        (_, a_end, a_c), (b_start, _, b_c) = ends(a), ends(b)
        if a in attached:  # beside its consumer, in the same row
            box_a, box_b = boxes[a], boxes[b]
            step = 1 if box_a.x < box_b.x else -1
            arrows[(a, b)] = [(box_a.x + step * box_a.w / 2, box_a.y), (box_b.x - step * box_b.w / 2, box_b.y)]
        elif rank[b] - rank[a] == 1:
            arrows[(a, b)] = [point(a_end, a_c), point(b_start, b_c)]
        else:  # around the ranks in between, on the nearer side
            corridor = margin / 2 if (a_c + b_c) / 2 < cross_total / 2 else cross_total - margin / 2
            below_a, above_b = a_end + GAP / 3, b_start - GAP / 3
            arrows[(a, b)] = [point(a_end, a_c), point(below_a, a_c), point(below_a, corridor),
                              point(above_b, corridor), point(above_b, b_c), point(b_start, b_c)]
    along_total = starts[-1] + thickness[-1]
    width, height = (cross_total, along_total) if tb else (along_total, cross_total)
    return boxes, arrows, width + 6, height + 6  # + room for the widest border on each side


def draw_summary(nodes: Sequence[Node], edges: Sequence[tuple], why: str = "too large",
                 font: int = SIZES["notebook"][0]):
    """A chart of what a large graph holds, instead of a drawing nobody could read."""
    kinds = collections.Counter("leaf" if isinstance(n, AccumulateGrad) else n.name() for n in nodes)
    common = kinds.most_common(8)
    label_width = CHAR * font * max(len(k) for k, _ in common) + 12
    bar_width, row = 360, font * 1.8
    top = font * 5
    width, height = label_width + bar_width + 80, top + row * len(common) + 10
    most = common[0][1]
    parts = [_svg_open(width, height, font),
             f"<text x='4' y='{font * 1.3:.0f}' font-size='{font + 2}'>{html.escape(summary_text(nodes, edges))}</text>",
             f"<text x='4' y='{font * 3:.0f}' fill='{MUTED}'>Too large to draw ({html.escape(why)}).</text>",
             f"<text x='4' y='{font * 4.3:.0f}' fill='{MUTED}'>The most common nodes:</text>"]
    for i, (kind, count) in enumerate(common):
        y = top + i * row
        length = max(2.0, bar_width * count / most)
        parts.append(f"<text x='{label_width - 8:.0f}' y='{y + row / 2:.1f}' text-anchor='end' "
                     f"dominant-baseline='central'>{html.escape(kind)}</text>"
                     f"<rect class='bar' x='{label_width:.0f}' y='{y + 3:.1f}' width='{length:.1f}' "
                     f"height='{row - 6:.1f}' fill='{style.BLUE}' data-count='{count}'/>"
                     f"<text x='{label_width + length + 6:.1f}' y='{y + row / 2:.1f}' "
                     f"dominant-baseline='central'>{count}</text>")
    parts.append("</svg>")
    return Summary("".join(parts), summary_text(nodes, edges), why, dict(common))


class Summary(NamedTuple):
    """What ``draw_graph`` shows for a graph too large to draw: SVG plus the facts in it."""

    svg: str
    text: str
    why: str
    counts: dict

    def _repr_html_(self) -> str:
        return f"<div class='minigrad-graph'>{self.svg}</div>"


def summary_text(nodes: Sequence[Node], edges: Sequence[tuple]) -> str:
    """One line describing a graph: its size, depth, width and leaves."""
    column = layers(nodes, edges)
    widest = max(collections.Counter(column.values()).values(), default=0)
    leaves = sum(isinstance(n, AccumulateGrad) for n in nodes)
    depth = max(column.values(), default=-1) + 1
    return (f"{len(nodes)} nodes, {len(edges)} edges, depth {depth}, widest layer {widest}, "
            f"{leaves} {'leaf' if leaves == 1 else 'leaves'}")


def _message(text: str, font: int) -> Summary:
    width = CHAR * font * len(text) * 1.1 + 20
    svg = (_svg_open(width, font * 3, font) + f"<text x='10' y='{font * 1.8:.0f}'>{html.escape(text)}</text></svg>")
    return Summary(svg, text, "no graph", {})
