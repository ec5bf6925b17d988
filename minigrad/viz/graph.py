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
# A picture shrinks with its output area, but never so far that its text falls below MIN_TEXT
# px: where one layout would, the page shows another (top to bottom), chosen by the browser
# from the width it really has (style.responsive), or scrolls sideways as a last resort.
SIZES = {  # size= preset -> (font size in px, the widest output a drawing is laid out for, px)
    "notebook": (14, 860),  # a JupyterLab cell at 100%; shown down to 12/14 of that on a projector
    "lecture": (20, 860),  # for a projector: bigger text, so larger graphs go top to bottom sooner
}
MIN_TEXT = 12  # px: no text of a picture is shown smaller (1280x720 at 200% still reads)
CHAR = 0.6  # width of one monospace character, in font sizes (DejaVu Sans Mono, Menlo, Consolas)
PAD = 8  # px between a box's text and its border
GAP = 28  # px between neighbouring ranks (columns or rows) and between boxes of one rank
COMPACT_GAP, COMPACT_PAD = 16, 5  # px: the compact layouts' gap between ranks and text padding
MAX_HEIGHT = 340  # px: the tallest a picture is shown (a notebook projected at 853x480 shows 359)
LANE = 6  # px across for an arrow passing a rank it skips (a slot of its own, ordered with the boxes)
PORT = 12  # px between the ends of two arrows on one side of a box
HEAD = 9  # px: the length of an arrow's head
MAX_NODES = 200  # above this a drawing is a hairball: draw_graph shows a summary instead
MAX_DEPTH = 40  # ranks: a longer chain would be metres long whichever way it is laid out
TEXT = "#222222"  # text colour: contrast 16:1 on white
MUTED = "#555555"  # secondary text: contrast 7.5:1 on white (the old #999 was 2.8:1)
ARROW = "#666666"

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

    ``narrow`` is the same graph laid out narrower (compacted, or top to bottom), for output
    areas narrower than ``min_width`` (the width below which this layout's text would be
    shown under ``MIN_TEXT`` px); it may have a ``narrow`` of its own (``layouts()`` lists
    them all). ``html()`` holds them all and the browser shows the one that fits.
    """

    def __init__(self, nodes, texts: dict, boxes: dict[Node, Box], edges: dict, width: float, height: float,
                 font: int, direction: str) -> None:
        self.nodes, self.texts, self.boxes, self.edges = nodes, texts, boxes, edges
        self.width, self.height, self.font, self.direction = width, height, font, direction
        self.min_width = width * MIN_TEXT / font  # shown narrower than this, its text would be too small
        self.narrow: GraphPicture | None = None
        self.highlight: dict = {}
        self.notes: dict = {}
        self.svg = self.render()

    def kind(self, node: Node) -> str:
        return self.highlight.get(node) or ("leaf" if isinstance(node, AccumulateGrad) else "function")

    def lines(self, node: Node) -> list[str]:
        return self.texts[node].split("\n") + ([self.notes[node]] if node in self.notes else [])

    def render(self, highlight: dict | None = None, notes: dict | None = None, *,
               follow: Node | None = None, max_height: float | None = None) -> str:
        """The SVG with ``highlight`` (node -> "current"/"done") and ``notes`` (node -> one more line).

        With ``max_height``, a taller picture shows a window of that height (in px, as drawn)
        centred on ``follow``: the backward stepper keeps the running node in view this way.
        The narrow layout, if any, is rendered alike (``narrow.svg``).
        """
        self.highlight, self.notes = highlight or {}, notes or {}
        top, height = 0.0, self.height
        if max_height is not None and self.height > max_height:
            height = max_height
            if follow is not None and follow in self.boxes:
                top = min(max(self.boxes[follow].y + 3 - height / 2, 0.0), self.height - height)
        parts = [_svg_open(self.width, height, self.font, top),
                 "<g transform='translate(3 3)'>"]  # room for the widest border
        for points in self.edges.values():
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points[:-1])
            tip, head = _arrow_head(points)
            parts.append(f"<polyline class='edge' points='{path} {head[1][0]:.1f},{head[1][1]:.1f}' fill='none' "
                         f"stroke='{ARROW}' stroke-width='2'/><polygon class='head' points='"
                         + " ".join(f"{x:.1f},{y:.1f}" for x, y in (tip, head[0], head[2])) + f"' fill='{ARROW}'/>")
        line_height = self.font * 1.25
        for node in self.nodes:
            box, kind = self.boxes[node], self.kind(node)
            dashes = " stroke-dasharray='6 4'" if kind == "done" else ""
            parts.append(
                f"<rect class='node {kind}' x='{box.x - box.w / 2:.1f}' y='{box.y - box.h / 2:.1f}' "
                f"width='{box.w:.1f}' height='{box.h:.1f}' rx='8' fill='{FILL[kind]}' stroke='{EDGE[kind]}' "
                f"stroke-width='{4 if kind == 'current' else 2}'{dashes}/>")
            lines = self.lines(node)
            first = box.y - line_height * (len(lines) - 1) / 2
            weight = " font-weight='bold'" if kind == "current" else ""
            for i, line in enumerate(lines):
                parts.append(f"<text x='{box.x:.1f}' y='{first + i * line_height:.1f}' text-anchor='middle' "
                             f"dominant-baseline='central'{weight}>{html.escape(line)}</text>")
        parts.append("</g></svg>")
        self.svg = "".join(parts)
        if self.narrow is not None:
            self.narrow.render(highlight, notes, follow=follow, max_height=max_height)
        return self.svg

    def html(self) -> str:
        """The picture for a page: this layout where it is readable, else the narrow one."""
        chain = self.layouts()[::-1]  # narrowest first
        return style.responsive([(0.0 if i == 0 else p.min_width, _scrolling(p)) for i, p in enumerate(chain)])

    def layouts(self) -> list[GraphPicture]:
        """This layout and the narrower ones the page falls back to, widest first."""
        chain, picture = [], self
        while picture is not None:
            chain.append(picture)
            picture = picture.narrow
        return chain

    def save(self, path: str) -> None:
        """Write the SVG to ``path`` (open it in a browser, or put it in slides)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg)

    def _repr_html_(self) -> str:
        return f"<div class='minigrad-graph'>{self.html()}</div>"


def _scrolling(picture: GraphPicture) -> str:
    """The SVG, shrunk to its output's width but never below ``min_width`` (then it scrolls);
    one taller than ``MAX_HEIGHT`` even compacted scrolls in a frame of that height."""
    frame = f";max-height:{MAX_HEIGHT}px;overflow-y:auto" if picture.height > MAX_HEIGHT else ""
    return (f"<div style='overflow-x:auto{frame}'><div style='min-width:{min(picture.min_width, picture.width):.0f}px'>"
            f"{picture.svg}</div></div>")


def _arrow_head(points) -> tuple:
    """The tip of an arrow and the three corners of its head: (tip, (left, base, right))."""
    (x0, y0), (x1, y1) = points[-2], points[-1]
    length = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1e-9)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    bx, by = x1 - ux * HEAD, y1 - uy * HEAD
    return (x1, y1), ((bx - uy * HEAD / 2, by + ux * HEAD / 2), (bx, by), (bx + uy * HEAD / 2, by - ux * HEAD / 2))


def _svg_open(width: float, height: float, font: int, top: float = 0.0) -> str:
    """An ``<svg>`` that keeps its size where it fits, and shrinks evenly where it does not."""
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 {top:.0f} {width:.0f} {height:.0f}' style='max-width:100%;height:auto;display:block' "
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

    The graph is laid out left to right where that fits the output's width, and top to
    bottom otherwise, each parameter beside the operation that uses it: the page holds
    both layouts and the browser shows the one that fits the width the output really
    has, with no text smaller than ``MIN_TEXT`` px. ``size="lecture"`` uses larger text
    for a projector. ``names`` defaults to the caller's variables. ``highlight`` maps
    nodes to ``"current"`` or ``"done"`` and ``notes`` adds a line to a node's box (the
    backward stepper uses both). A graph that cannot be drawn readably (more than
    ``max_nodes`` nodes, more than ``max_depth`` steps deep, or too wide for a cell
    even top to bottom) is summarised instead.
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
    pictures = {}
    for direction in ("LR", "TB"):
        for compact in (False, True):
            spacing = dict(gap=COMPACT_GAP, pad=COMPACT_PAD) if compact else {}
            placed = layout(nodes, edges, sizing, font, direction, max_depth, **spacing)
            if placed is not None:
                pictures[direction, compact] = GraphPicture(nodes, texts, *placed, font, direction)
    if not pictures:
        return draw_summary(nodes, edges, f"more than {max_depth} steps deep", font)
    # Widest first: across, across compacted (a little narrower: only where across fits a
    # cell), then top to bottom, compacted
    # if it would be taller than MAX_HEIGHT. Each is shown from the width its text needs down
    # to where the next one takes over (style.responsive): the browser picks by the real width.
    down = pictures.get(("TB", False))
    if down is None or down.height > MAX_HEIGHT:
        down = pictures.get(("TB", True), down)
    across = pictures.get(("LR", False))
    if across is None or across.min_width > budget:  # the compact one only between the two
        across = None
    fitting = [p for p in (across, across and pictures.get(("LR", True)), down)
               if p is not None and p.min_width <= budget]
    if not fitting:
        widest = min(p.min_width for p in pictures.values())
        return draw_summary(nodes, edges, f"{widest:.0f} px wide even top to bottom, "
                                          f"more than the {budget} px of a notebook cell", font)
    picture = last = fitting[0]
    for narrower in fitting[1:]:
        if narrower.min_width < last.min_width:
            last.narrow = last = narrower
    picture.render(highlight, notes)
    return picture


class _Pass(NamedTuple):
    """A slot that an arrow skipping ranks takes in each rank it passes (a 'dummy node')."""

    source: Node
    target: Node
    rank: int


def layout(nodes, edges, texts: dict, font: int, direction: str, max_depth: int = MAX_DEPTH,
           gap: float = GAP, pad: float = PAD):
    """Place every node: ``(boxes, arrows, width, height)``, or None if deeper than ``max_depth``.
    ``gap`` is the space between ranks, ``pad`` between a box's text and its border (the
    compact layouts use less of both).

    Nodes are grouped into *units* placed along *ranks*: the columns of a left-to-right
    layout, the rows of a top-to-bottom one. Top to bottom, a leaf used by one
    operation only (a layer's weight or bias) shares that operation's row, one on
    each side, so a layer reads as one line. Every box of a rank has the same
    thickness, so an arrow between neighbouring ranks crosses only the gap between
    them. An arrow that skips ranks takes a slot of its own in each rank it passes,
    ordered with the boxes (Sugiyama's dummy nodes), so it runs beside them, never
    behind one and never on top of another arrow; the arrows leaving (or entering) one
    box leave from separate points of its side, in the order of where they go.
    """
    tb = direction == "TB"
    line = font * 1.25
    size = {n: (CHAR * font * max(map(len, t.split("\n"))) + 2 * pad, line * (t.count("\n") + 1) + 2 * pad)
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
    passes, slot_edges = {}, []  # (a, b) -> its slots in the ranks between; the edges through them
    for a, b in unit_edges:
        chain = [_Pass(a, b, r) for r in range(rank[a] + 1, rank[b])]
        passes[(a, b)] = chain
        for p in chain:
            rank[p] = p.rank
        slot_edges += list(zip([a, *chain], [*chain, b]))
    slots = units + [p for chain in passes.values() for p in chain]
    order = rows(slots, slot_edges, rank)

    def members(unit) -> list:
        if isinstance(unit, _Pass):
            return []
        left, right = sides[unit] if unit in sides else ([], [])
        return [*left[::-1], unit, *right]

    n_ranks = max(rank[u] for u in units) + 1
    thickness = [max([along[m] for u in units if rank[u] == r for m in members(u)], default=0.0)
                 for r in range(n_ranks)]
    starts = [sum(thickness[:r]) + gap * r for r in range(n_ranks)]
    centre = {}  # node or slot -> (position along the rank axis, position across it)
    extent = []
    for r in range(n_ranks):
        in_rank = sorted((u for u in slots if rank[u] == r), key=order.get)
        cross, previous = 0.0, None
        for unit in in_rank:
            for m in (members(unit) or [unit]):
                passing = isinstance(m, _Pass)
                if previous is not None:
                    cross += GAP / 2 if passing or previous else GAP
                length = LANE if passing else across[m]
                centre[m] = (starts[r] + thickness[r] / 2, cross + length / 2)
                cross += length
                previous = passing
        extent.append(cross)
    widest = max(extent)
    for key, (along_pos, cross_pos) in centre.items():  # centre every rank on the widest one
        r = key.rank if isinstance(key, _Pass) else rank[attached.get(key, key)]
        centre[key] = (along_pos, cross_pos + (widest - extent[r]) / 2)

    boxes = {}
    for node in nodes:
        along_pos, cross_pos = centre[node]
        r = rank[attached.get(node, node)]
        a_len, c_len = thickness[r], across[node]
        boxes[node] = Box(cross_pos, along_pos, c_len, a_len) if tb else Box(along_pos, cross_pos, a_len, c_len)

    def point(along_pos: float, cross_pos: float) -> tuple:
        return (cross_pos, along_pos) if tb else (along_pos, cross_pos)

    # The arrows between units, through their slots: (along, cross) points, ports still central.
    routes = {}
    for (a, b), chain in passes.items():
        r_a, r_b = rank[a], rank[b]
        route = [(starts[r_a] + thickness[r_a], centre[a][1])]
        for p in chain:
            route += [(starts[p.rank], centre[p][1]), (starts[p.rank] + thickness[p.rank], centre[p][1])]
        routes[(a, b)] = route + [(starts[r_b], centre[b][1])]
    # Separate ports: the arrows leaving one box spread along its side, in the order of where they go next.
    for end, neighbour in ((0, 1), (-1, -2)):
        by_node = collections.defaultdict(list)
        for key, route in routes.items():
            by_node[key[0] if end == 0 else key[1]].append(key)
        for node, keys in by_node.items():
            keys.sort(key=lambda k: routes[k][neighbour][1])
            spacing = min(PORT, across[node] / (len(keys) + 1))
            for i, k in enumerate(keys):
                along_pos, cross_pos = routes[k][end]
                routes[k][end] = (along_pos, cross_pos + (i - (len(keys) - 1) / 2) * spacing)
    arrows = {}
    for a, b in edges:
        if a in attached:  # beside its consumer, in the same row
            box_a, box_b = boxes[a], boxes[b]
            step = 1 if box_a.x < box_b.x else -1
            arrows[(a, b)] = [(box_a.x + step * box_a.w / 2, box_a.y), (box_b.x - step * box_b.w / 2, box_b.y)]
        else:
            arrows[(a, b)] = [point(*p) for p in routes[(a, b)]]
    along_total = starts[-1] + thickness[-1]
    width, height = (widest, along_total) if tb else (along_total, widest)
    return boxes, arrows, width + 6, height + 6  # + room for the widest border on each side


def draw_summary(nodes: Sequence[Node], edges: Sequence[tuple], why: str = "too large",
                 font: int = SIZES["notebook"][0]):
    """A chart of what a large graph holds, instead of a drawing nobody could read.

    Its sentences are HTML, so they wrap in any width instead of being cut off; the
    bars are SVG with their labels, as wide as the longest label needs.
    """
    kinds = collections.Counter("leaf" if isinstance(n, AccumulateGrad) else n.name() for n in nodes)
    common = kinds.most_common(8)
    label_width = CHAR * font * max(len(k) for k, _ in common) + 12
    bar_width, row = 200, font * 1.8
    count_width = CHAR * font * len(str(common[0][1])) + 12
    width, height = label_width + bar_width + count_width, row * len(common) + 6
    most = common[0][1]
    parts = [_svg_open(width, height, font)]
    for i, (kind, count) in enumerate(common):
        y = 3 + i * row
        length = max(2.0, bar_width * count / most)
        parts.append(f"<text x='{label_width - 8:.0f}' y='{y + row / 2:.1f}' text-anchor='end' "
                     f"dominant-baseline='central'>{html.escape(kind)}</text>"
                     f"<rect class='bar' x='{label_width:.0f}' y='{y + 3:.1f}' width='{length:.1f}' "
                     f"height='{row - 6:.1f}' fill='{style.BLUE}' data-count='{count}'/>"
                     f"<text x='{label_width + length + 6:.1f}' y='{y + row / 2:.1f}' "
                     f"dominant-baseline='central'>{count}</text>")
    parts.append("</svg>")
    svg = "".join(parts)
    text = summary_text(nodes, edges)
    page = (f"<p style='margin:0 0 4px;font-size:{font + 2}px'>{html.escape(text)}</p>"
            f"<p style='margin:0 0 6px;color:{MUTED}'>Too large to draw ({html.escape(why)}). "
            f"The most common nodes:</p>"
            f"<div style='max-width:{width:.0f}px;min-width:{width * MIN_TEXT / font:.0f}px'>{svg}</div>")
    return Summary(svg, text, why, dict(common), _page(page, font))


def _page(body: str, font: int) -> str:
    return (f"<div class='minigrad-graph' style='font-family:DejaVu Sans Mono, Menlo, Consolas, monospace;"
            f"font-size:{font}px;color:{TEXT};overflow-x:auto;overflow-wrap:anywhere'>{body}</div>")


class Summary(NamedTuple):
    """What ``draw_graph`` shows for a graph too large to draw: SVG of the bars, the facts
    in it, and the page (``html``) that holds both, its sentences wrapping."""

    svg: str
    text: str
    why: str
    counts: dict
    html: str = ""

    def _repr_html_(self) -> str:
        return self.html


def summary_text(nodes: Sequence[Node], edges: Sequence[tuple]) -> str:
    """One line describing a graph: its size, depth, width and leaves."""
    column = layers(nodes, edges)
    widest = max(collections.Counter(column.values()).values(), default=0)
    leaves = sum(isinstance(n, AccumulateGrad) for n in nodes)
    depth = max(column.values(), default=-1) + 1
    return (f"{len(nodes)} nodes, {len(edges)} edges, depth {depth}, widest layer {widest}, "
            f"{leaves} {'leaf' if leaves == 1 else 'leaves'}")


def _message(text: str, font: int) -> Summary:
    return Summary("", text, "no graph", {}, _page(f"<p style='margin:0'>{html.escape(text)}</p>", font))
