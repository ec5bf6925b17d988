"""Generating mutants: the classic operators (``OPERATORS``) applied to the code between a
graded cell's ``### BEGIN SOLUTION`` and ``### END SOLUTION`` markers, each mutant compiled and
deduplicated (``generate``)."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


@dataclass(frozen=True)
class Mutation:
    stage: str  # "04_topological_backward"
    part: str  # grade_id of the cell
    operator: str
    line: int  # 1-based line in the cell
    before: str  # the changed lines of the solution, stripped
    after: str  # the same lines in the mutant
    source: str  # the whole mutated cell

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """What identifies a mutant across edits elsewhere in the cell (AUTHORING.md's table)."""
        return (self.stage[:2], self.part, self.operator, self.before, self.after)

    def diff(self) -> str:
        return f"- {self.before}\n+ {self.after}"

    def short(self) -> str:
        return f"{self.stage[:2]} {self.part} {self.operator} line {self.line}: `{self.before}` -> `{self.after}`"


OPERATORS = {
    "arithmetic": "+ <-> -, * <-> /, ** -> *, @ -> * (also in +=, *=)",
    "swap_operands": "operands of a non-commutative operator, or a call's first two arguments (axes too), swapped",
    "comparison": "< <-> <=, > <-> >=, == <-> !=, is <-> is not, in <-> not in",
    "boolean": "and <-> or, `not` dropped, unary minus dropped",
    "off_by_one": "range bounds, indices, slice bounds and exponents (step counters) +-1",
    "constant": "an int or float constant +-1, True <-> False",
    "sum_mean": ".sum() <-> .mean()",
    "drop_statement": "a statement replaced by `pass`",
    "drop_tuple_element": "an element of a returned tuple dropped",
    "numpy_twin": "a tensor op computed by its NumPy twin on the values (the graph is cut)",
    "detach_clone": ".detach() / .clone() removed, or added to a returned or assigned value",
    "no_grad": "`with no_grad():` dropped (its body kept)",
    "inplace": "out of place <-> in place (a = a + b <-> a += b, .add() <-> .add_())",
    "keepdim": "keepdim/keepdims flipped, or keepdim=True added to a reduction over a dim",
    "transpose": ".T / .mT dropped",
    "reverse_iteration": "for x in xs <-> for x in reversed(xs), [::-1] dropped, .pop() <-> .pop(0)",
    "preorder_postorder": "an .append(...) moved to the other side of the loop beside it",
}

NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
ARITH_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
               ast.FloorDiv: ast.Div, ast.Pow: ast.Mult, ast.MatMult: ast.Mult}
COMPARE_SWAPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                 ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
TWINS = {"exp", "log", "sin", "cos", "tanh", "sqrt", "abs", "sign", "sum", "mean", "log1p", "expm1"}
MODULES = {"minigrad", "torch", "np", "numpy", "math", "F", "nn", "engine", "numba", "mg"}
INPLACE = {"sub", "mul", "div", "clamp", "exp", "relu", "sigmoid", "tanh", "neg", "abs", "sqrt",
           "pow", "zero", "fill", "log", "sin", "cos", "clamp_min", "clamp_max", "addcmul", "addcdiv",
           "lerp", "mul", "masked_fill", "t", "transpose", "squeeze", "unsqueeze"}
REDUCTIONS = {"sum", "mean", "max", "min", "amax", "amin", "logsumexp", "std", "var", "prod", "norm", "all", "any"}
TWIN_SUFFIX = "\nimport numpy as _np, minigrad as _mg  # the numpy_twin mutant's names\n"


class _Source:
    """A cell's source with byte-exact splicing at AST positions (col offsets are UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.encode("utf-8").splitlines(keepends=True)

    def offset(self, lineno: int, col: int) -> int:
        return sum(len(line) for line in self.lines[: lineno - 1]) + col

    def segment(self, node) -> str:
        data = self.text.encode("utf-8")
        return data[self.offset(node.lineno, node.col_offset): self.offset(node.end_lineno, node.end_col_offset)].decode()

    def replace(self, node, new: str) -> str:
        data = self.text.encode("utf-8")
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        return (data[:start] + new.encode("utf-8") + data[end:]).decode("utf-8")

    def replace_lines(self, first: int, last: int, new_lines: list[str]) -> str:
        text_lines = self.text.splitlines(keepends=True)
        return "".join(text_lines[: first - 1] + new_lines + text_lines[last:])


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def solution_region(source: str) -> tuple[int, int]:
    """1-based first and last line between the BEGIN and END SOLUTION markers (the whole cell if none)."""
    lines = source.splitlines()
    begin = next((i for i, line in enumerate(lines) if line.strip() == BEGIN), None)
    end = next((i for i, line in enumerate(lines) if line.strip() == END), None)
    if begin is None or end is None:
        return 1, len(lines)
    return begin + 2, end


def _parenthesize(text: str, node) -> str:
    return f"({text})" if isinstance(node, (ast.BinOp, ast.BoolOp, ast.Compare, ast.UnaryOp, ast.IfExp,
                                             ast.Lambda, ast.NamedExpr)) else text


def _is_module(node) -> bool:
    return isinstance(node, ast.Name) and node.id in MODULES or (
        isinstance(node, ast.Attribute) and _is_module(node.value))


def _expression_edits(tree, src: _Source) -> Iterator[tuple[str, ast.AST, str]]:
    """(operator, node, replacement text) for every expression-level mutation."""
    parents = {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent

    def text(node) -> str:
        return src.segment(node)

    def wrapped(node) -> str:  # the node's text, safe to put in an operator's operand
        return f"({text(node)})" if isinstance(node, (ast.BinOp, ast.BoolOp, ast.Compare, ast.UnaryOp,
                                                       ast.IfExp, ast.Lambda, ast.NamedExpr)) else text(node)

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            new_op = ARITH_SWAPS.get(type(node.op))
            left, right = wrapped(node.left), wrapped(node.right)
            symbol = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
                      ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|"}
            if new_op is not None:
                yield "arithmetic", node, f"{left} {symbol[new_op]} {right}"
            if isinstance(node.op, NON_COMMUTATIVE) and type(node.op) in symbol:
                yield "swap_operands", node, f"{right} {symbol[type(node.op)]} {left}"
            if isinstance(node.op, ast.Pow) and not isinstance(node.right, ast.Constant):
                for d in ("+ 1", "- 1"):
                    yield "off_by_one", node, f"{left} ** ({text(node.right)} {d})"
            if isinstance(node.op, ast.MatMult):
                yield "numpy_twin", node, (f"_mg.tensor(_np.matmul({wrapped(node.left)}.detach().numpy(), "
                                           f"{wrapped(node.right)}.detach().numpy()))")
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            new = COMPARE_SWAPS.get(type(node.ops[0]))
            if new is not None:
                yield "comparison", node, _compare_text(src, node, new)
        elif isinstance(node, ast.BoolOp):
            other = "or" if isinstance(node.op, ast.And) else "and"
            yield "boolean", node, f" {other} ".join(wrapped(v) for v in node.values)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            if not (isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)):
                yield "boolean", node, text(node.operand)
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
            parent = parents.get(node)
            if isinstance(parent, ast.Expr):
                continue
            if isinstance(node.value, bool):
                yield "constant", node, str(not node.value)
            else:
                for new_value in (node.value + 1, node.value - 1):
                    yield "constant", node, repr(new_value)
        elif isinstance(node, ast.Subscript):
            index = node.slice
            if isinstance(index, ast.Slice):
                if index.step is not None and isinstance(index.step, ast.UnaryOp) and index.lower is None \
                        and index.upper is None:
                    yield "reverse_iteration", node, text(node.value)  # xs[::-1] -> xs
                for bound in (index.lower, index.upper):
                    if bound is not None and not isinstance(bound, (ast.Constant, ast.UnaryOp)):
                        for d in ("+ 1", "- 1"):
                            yield "off_by_one", bound, f"{wrapped(bound)} {d}"
            elif isinstance(index, (ast.Name, ast.Attribute, ast.BinOp)) and isinstance(node.ctx, ast.Load) \
                    and not _is_string_key(index):
                for d in ("+ 1", "- 1"):
                    yield "off_by_one", index, f"{wrapped(index)} {d}"
        elif isinstance(node, ast.Attribute) and node.attr in ("T", "mT") and isinstance(node.ctx, ast.Load):
            yield "transpose", node, text(node.value)
        elif isinstance(node, ast.Call):
            yield from _call_edits(node, src, text, wrapped)
        elif isinstance(node, ast.For):
            it = node.iter
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "reversed" and it.args:
                yield "reverse_iteration", it, text(it.args[0])
            else:
                yield "reverse_iteration", it, f"reversed(list({text(it)}))"


def _is_string_key(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _compare_text(src: _Source, node: ast.Compare, new_op) -> str:
    symbol = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
              ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}[new_op]

    def operand(n):
        t = src.segment(n)
        return f"({t})" if isinstance(n, (ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.NamedExpr)) else t
    return f"{operand(node.left)} {symbol} {operand(node.comparators[0])}"


def _call_edits(node: ast.Call, src: _Source, text, wrapped):
    func = node.func
    if len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
        a, b = node.args[0], node.args[1]
        rest = [src.segment(x) for x in node.args[2:]] + [src.segment(k) for k in node.keywords]
        yield "swap_operands", node, f"{text(func)}({', '.join([text(b), text(a), *rest])})"
    if isinstance(func, ast.Name) and func.id == "range" and node.args:
        stop = node.args[-1]
        for d in ("+ 1", "- 1"):
            yield "off_by_one", stop, f"{wrapped(stop)} {d}"
        if len(node.args) >= 2:
            yield "off_by_one", node.args[0], f"{wrapped(node.args[0])} + 1"
    if isinstance(func, ast.Attribute):
        receiver = func.value
        name = func.attr
        if name in ("sum", "mean"):
            other = "mean" if name == "sum" else "sum"
            yield "sum_mean", func, f"{text(receiver)}.{other}"
        if name in ("detach", "clone") and not node.args and not node.keywords:
            yield "detach_clone", node, text(receiver)
        if name == "pop":
            if not node.args:
                yield "reverse_iteration", node, f"{text(receiver)}.pop(0)"
            elif len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0:
                yield "reverse_iteration", node, f"{text(receiver)}.pop()"
        if name in TWINS and not _is_module(receiver) and all(isinstance(a, ast.Constant) for a in node.args) \
                and not node.keywords:
            extra = "".join(f", {src.segment(a)}" for a in node.args)
            yield "numpy_twin", node, f"_mg.tensor(_np.{name}({wrapped(receiver)}.detach().numpy(){extra}))"
        if name in TWINS and _is_module(receiver) and isinstance(receiver, ast.Name) \
                and receiver.id in ("minigrad", "torch") and len(node.args) == 1 and not node.keywords:
            yield "numpy_twin", node, f"_mg.tensor(_np.{name}({wrapped(node.args[0])}.detach().numpy()))"
        if name in INPLACE and not _is_module(receiver):
            yield "inplace", func, f"{text(receiver)}.{name}_"
        if name.endswith("_") and not name.startswith("_") and name[:-1] in INPLACE and not _is_module(receiver):
            yield "inplace", func, f"{text(receiver)}.{name[:-1]}"
        if name in REDUCTIONS:
            keep = [k for k in node.keywords if k.arg in ("keepdim", "keepdims")]
            has_dim = node.args if not _is_module(receiver) else node.args[1:]
            has_dim = bool(has_dim) or any(k.arg in ("dim", "axis") for k in node.keywords)
            if not keep and has_dim:
                word = "keepdims" if _is_numpy(receiver) else "keepdim"
                inner = ", ".join([*(src.segment(a) for a in node.args), *(src.segment(k) for k in node.keywords),
                                   f"{word}=True"])
                yield "keepdim", node, f"{text(func)}({inner})"
    for keyword in node.keywords:
        if keyword.arg in ("keepdim", "keepdims") and isinstance(keyword.value, ast.Constant) \
                and isinstance(keyword.value.value, bool):
            yield "keepdim", keyword.value, str(not keyword.value.value)


def _is_numpy(node) -> bool:
    return isinstance(node, ast.Name) and node.id in ("np", "numpy")


def _statement_edits(tree, src: _Source) -> Iterator[tuple[str, int, int, list[str]]]:
    """(operator, first line, last line, new lines) for every statement-level mutation."""
    lines = src.text.splitlines(keepends=True)
    for node in ast.walk(tree):
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(node, field_name, None)
            if not isinstance(block, list) or not block or not isinstance(block[0], ast.stmt):
                continue
            for i, stmt in enumerate(block):
                indent = _indent(lines[stmt.lineno - 1])
                if _droppable(stmt, i):
                    yield "drop_statement", stmt.lineno, stmt.end_lineno, [f"{indent}pass\n"]
                if isinstance(stmt, ast.With) and any(_is_grad_mode(item.context_expr) for item in stmt.items) \
                        and stmt.body[0].lineno > stmt.lineno:
                    new = [f"{indent}if True:\n", *lines[stmt.body[0].lineno - 1: stmt.end_lineno]]
                    yield "no_grad", stmt.lineno, stmt.end_lineno, new
                if _is_append(stmt):
                    loops = [j for j, s in enumerate(block) if isinstance(s, (ast.For, ast.While))]
                    after = [j for j in loops if j > i]
                    before = [j for j in loops if j < i]
                    mine = lines[stmt.lineno - 1: stmt.end_lineno]
                    if after:  # preorder -> postorder: the append goes after the next loop
                        loop = block[after[0]]
                        new = lines[stmt.end_lineno: loop.end_lineno] + mine
                        yield "preorder_postorder", stmt.lineno, loop.end_lineno, new
                    if before:  # postorder -> preorder: the append goes before the previous loop
                        loop = block[before[-1]]
                        new = mine + lines[loop.lineno - 1: stmt.lineno - 1]
                        yield "preorder_postorder", loop.lineno, stmt.end_lineno, new
                if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Tuple) and len(stmt.value.elts) >= 2:
                    for k in range(len(stmt.value.elts)):
                        kept = [src.segment(e) for j, e in enumerate(stmt.value.elts) if j != k]
                        body = ", ".join(kept) + ("," if len(kept) == 1 else "")
                        yield ("drop_tuple_element", stmt.lineno, stmt.end_lineno,
                               [f"{indent}return {body}\n"])
                if isinstance(stmt, ast.Return) and stmt.value is not None:
                    values = stmt.value.elts if isinstance(stmt.value, ast.Tuple) else [stmt.value]
                    for k, value in enumerate(values):
                        if isinstance(value, (ast.Constant, ast.Tuple, ast.List, ast.Dict)):
                            continue
                        for method in ("detach", "clone"):
                            parts = [src.segment(e) if j != k else f"{_paren(src, e)}.{method}()"
                                     for j, e in enumerate(values)]
                            body = ", ".join(parts) if isinstance(stmt.value, ast.Tuple) else parts[0]
                            if stmt.lineno == stmt.end_lineno:
                                yield "detach_clone", stmt.lineno, stmt.end_lineno, [f"{indent}return {body}\n"]
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.BinOp) \
                        and stmt.lineno == stmt.end_lineno:
                    target = src.segment(stmt.targets[0])
                    if isinstance(stmt.targets[0], (ast.Name, ast.Attribute, ast.Subscript)) \
                            and src.segment(stmt.value.left) == target:
                        op = _OP_SYMBOL.get(type(stmt.value.op))
                        if op:
                            yield ("inplace", stmt.lineno, stmt.end_lineno,
                                   [f"{indent}{target} {op}= {_paren(src, stmt.value.right)}\n"])
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.lineno == stmt.end_lineno \
                        and isinstance(stmt.value, (ast.Call, ast.BinOp)) and isinstance(stmt.targets[0], ast.Name):
                    for method in ("detach", "clone"):
                        yield ("detach_clone", stmt.lineno, stmt.end_lineno,
                               [f"{indent}{src.segment(stmt.targets[0])} = {_paren(src, stmt.value)}.{method}()\n"])
                if isinstance(stmt, ast.AugAssign) and stmt.lineno == stmt.end_lineno:
                    target = src.segment(stmt.target)
                    op = _OP_SYMBOL.get(type(stmt.op))
                    new_op = _OP_SYMBOL.get(ARITH_SWAPS.get(type(stmt.op)))
                    if op:
                        yield ("inplace", stmt.lineno, stmt.end_lineno,
                               [f"{indent}{target} = {target} {op} {_paren(src, stmt.value)}\n"])
                    if new_op:
                        yield ("arithmetic", stmt.lineno, stmt.end_lineno,
                               [f"{indent}{target} {new_op}= {src.segment(stmt.value)}\n"])


_OP_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.MatMult: "@",
              ast.Pow: "**"}


def _paren(src: _Source, node) -> str:
    return _parenthesize(src.segment(node), node)


def _droppable(stmt, index: int) -> bool:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass, ast.Global, ast.Nonlocal,
                         ast.Import, ast.ImportFrom)):
        return False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return False  # a docstring or a bare constant
    return True


def _is_grad_mode(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) and (
        getattr(node.func, "attr", getattr(node.func, "id", "")) in ("no_grad", "enable_grad"))


def _is_append(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
        and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in ("append", "extend")


def generate(stage: str, part: str, source: str) -> list[Mutation]:
    """Every mutant of one cell, inside its solution region, that compiles (deduplicated)."""
    first, last = solution_region(source)
    tree = ast.parse(source)
    src = _Source(source)
    old_lines = source.splitlines()
    found: dict[str, Mutation] = {}

    def add(operator: str, new_source: str, line: int) -> None:
        if new_source == source or new_source in found:
            return
        if operator == "numpy_twin" or "_np." in new_source and "_np." not in source:
            new_source = new_source.rstrip("\n") + "\n" + TWIN_SUFFIX.lstrip("\n")
        try:
            compile(new_source, "<mutant>", "exec")
        except (SyntaxError, ValueError):
            return
        new_lines = new_source.splitlines()
        # the changed lines: strip the common head and tail
        head = 0
        while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
            head += 1
        tail = 0
        suffix_lines = TWIN_SUFFIX.strip("\n").count("\n") + 1 if new_source.endswith(TWIN_SUFFIX.lstrip("\n")) \
            and not source.endswith(TWIN_SUFFIX.lstrip("\n")) else 0
        trimmed = new_lines[: len(new_lines) - suffix_lines] if suffix_lines else new_lines
        while tail < min(len(old_lines), len(trimmed)) - head and old_lines[-1 - tail] == trimmed[-1 - tail]:
            tail += 1
        before = " / ".join(x.strip() for x in old_lines[head: len(old_lines) - tail])
        after = " / ".join(x.strip() for x in trimmed[head: len(trimmed) - tail])
        found[new_source] = Mutation(stage, part, operator, line, before, after, new_source)

    for operator, node, new in _expression_edits(tree, src):
        if first <= node.lineno and node.end_lineno <= last:
            add(operator, src.replace(node, new), node.lineno)
    for operator, lo, hi, new_lines in _statement_edits(tree, src):
        if first <= lo and hi <= last:
            add(operator, src.replace_lines(lo, hi, new_lines), lo)
    return list(found.values())

