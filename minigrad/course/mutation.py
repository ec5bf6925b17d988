"""Mutation testing of the stages' checks: does every wrong answer lose points?

A hand-written list of mistakes (``tests/mutants/``) catches the mistakes we
thought of. This module finds the others by a method: it takes each graded
cell of a solved worksheet (``solutions/NN_name.ipynb``), makes small changes
to the code between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` with the
classic mutation operators (``OPERATORS``), runs each changed worksheet as the
grader runs it, and sorts the mutants:

- **equivalent**: on the part's own probes, at several seeds, it gives the same
  observations as the solution (so it is not a mistake we can see: dropped);
- **killed**: a check of its own part loses points (at the grader's seed 0);
- **survived**: it behaves differently from the solution, yet its part keeps
  every point. Each survivor is a hole in the checks, or must be justified in
  ``AUTHORING.md`` (the table under "Mutation survivors").

Each mutant runs in a forked child of one process that has already run the
solved worksheet (fast, and a mutant that hangs, crashes or writes over
global state cannot harm the others): the child re-runs the mutated cell and
the cells after it, then probes.

Command line: ``python -m minigrad.course mutate [--stages 04,05] [--cap N] [--report]``.
"""
from __future__ import annotations

import ast
import json
import os
import random
import re
import select
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
EQUIVALENCE_SEEDS = (0, 1, 2, 3)  # run seeds: 0 is the grader's default
GRADING_SEED = 0

# -- generating mutants --------------------------------------------------------------------


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


# -- running mutants -------------------------------------------------------------------------


@dataclass
class Outcome:
    mutation: Mutation
    status: str  # equivalent | killed | survived | timeout | crashed
    lost: list[str] = field(default_factory=list)  # checks of the part that did not pass
    feedback: dict[str, str] = field(default_factory=dict)
    differs: list[str] = field(default_factory=list)  # checks whose observations differ from the solution's
    seconds: float = 0.0
    seen_elsewhere: list[str] = field(default_factory=list)

    @property
    def killed(self) -> bool:
        return self.status in ("killed", "timeout", "crashed")


@dataclass
class StageResult:
    stage: str
    generated: int
    outcomes: list[Outcome]
    justified: dict[tuple, str] = field(default_factory=dict)

    def count(self, *statuses: str) -> int:
        return sum(o.status in statuses for o in self.outcomes)

    @property
    def killed(self) -> int:
        return self.count("killed", "timeout", "crashed")

    @property
    def survivors(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "survived"]

    @property
    def unjustified(self) -> list[Outcome]:
        return [o for o in self.survivors if o.mutation.key not in self.justified]

    @property
    def score(self) -> float:
        """Killed share of the non-equivalent mutants, counting justified survivors as killed."""
        live = self.killed + len(self.survivors)
        return 1.0 if live == 0 else (self.killed + len(self.survivors) - len(self.unjustified)) / live


def _same(a, b, mask: set, path: str = "") -> bool:
    if path in mask:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], mask, f"{path}/{k}") for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, mask, f"{path}/{i}") for i, (x, y) in enumerate(zip(a, b)))
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) \
                or not isinstance(b, (int, float)):
            return False
        if a != a or b != b:
            return a != a and b != b
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return type(a) is type(b) and a == b


def _noisy_paths(a, b, path: str = "") -> set:
    """Paths where two runs of the same code differ (timings, object ids): ignored when comparing."""
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return set().union(*(_noisy_paths(a[k], b[k], f"{path}/{k}") for k in a)) if a else set()
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return set().union(*(_noisy_paths(x, y, f"{path}/{i}") for i, (x, y) in enumerate(zip(a, b)))) if a else set()
    return set() if _same(a, b, set()) else {path}


class StageRunner:
    """One stage: the solved worksheet run once in this process; each mutant in a forked child."""

    def __init__(self, stage_key: str, root: Path) -> None:
        from minigrad.course.checks import check_seed, observe, roundtrip
        from minigrad.course.program import build_program, load_notebook
        from minigrad.course.stages import get_stage

        (self.path,) = sorted((root / "solutions").glob(f"{stage_key}*.ipynb"))
        self.key = self.path.stem
        self.stage = get_stage(self.key)
        self.template = load_notebook(self.path)
        self.program = build_program(self.template, {})
        self.namespace = None
        self._check_seed, self._observe, self._roundtrip = check_seed, observe, roundtrip
        self.checks = {c.id: c for c in self.stage.checks}

    def sources(self) -> dict[str, str]:
        return {cell.grade_id: cell.source for cell in self.program if cell.grade_id in self.stage.parts}

    def part_checks(self, part: str) -> list:
        return [c for c in self.stage.checks if c.part == part]

    def closure(self, part: str) -> list:
        """The part's checks and every check they need, in the stage's order."""
        wanted = {c.id for c in self.part_checks(part)}
        changed = True
        while changed:
            changed = False
            for c in self.stage.checks:
                if c.id in wanted:
                    for need in c.needs:
                        if need not in wanted:
                            wanted.add(need)
                            changed = True
        return [c for c in self.stage.checks if c.id in wanted]

    def prepare(self) -> None:
        """Run the solved worksheet, then probe it and the reference (what the mutants are compared with)."""
        from minigrad.course.program import execute_program

        with _quiet():
            self.namespace, errors = execute_program(self.program)
        if errors:
            raise RuntimeError(f"{self.key}: the solved worksheet fails: {[e.describe() for e in errors]}")
        with _quiet():
            reference_ns = self.stage.reference()
            self.reference = {c.id: self._roundtrip(self._observe(c, reference_ns, self._check_seed(GRADING_SEED, c.id)))
                              for c in self.stage.checks}
            self.solution, self.noise, self.seconds = {}, {}, {}
            for c in self.stage.checks:
                start = time.perf_counter()
                for s in EQUIVALENCE_SEEDS:
                    first = self._roundtrip(self._observe(c, self.namespace, self._check_seed(s, c.id)))
                    second = self._roundtrip(self._observe(c, self.namespace, self._check_seed(s, c.id)))
                    self.solution[c.id, s] = first
                    self.noise[c.id, s] = _noisy_paths(first, second)
                self.seconds[c.id] = (time.perf_counter() - start) / (2 * len(EQUIVALENCE_SEEDS))

    def timeout(self, part: str) -> float:
        return 20.0 + 10 * sum(self.seconds[c.id] for c in self.closure(part)) * len(EQUIVALENCE_SEEDS)

    # -- in the child ------------------------------------------------------------------------
    def evaluate(self, mutation: Mutation) -> dict:
        """Run one mutant (in a forked child): its cell and the cells after it, then its part's probes."""
        from minigrad.course.checks import judge
        from minigrad.course.program import ProgramCell, execute_program

        index = next(i for i, cell in enumerate(self.program) if cell.grade_id == mutation.part)
        cells = [ProgramCell(self.program[index].index, mutation.part, mutation.source), *self.program[index + 1:]]
        namespace = self.namespace
        _, errors = execute_program(cells, namespace)
        passed: set[str] = set()
        lost, feedback, differs = [], {}, []
        observations = {}
        for check in self.closure(mutation.part):
            if any(n not in passed for n in check.needs):
                if check.part == mutation.part:
                    lost.append(check.id)
                    feedback[check.id] = "not run: needs " + ", ".join(n for n in check.needs if n not in passed)
                continue
            observation = self._roundtrip(self._observe(check, namespace, self._check_seed(GRADING_SEED, check.id)))
            observations[check.id, GRADING_SEED] = observation
            verdict = judge(check, observation, self.reference[check.id])
            if verdict.passed:
                passed.add(check.id)
            elif check.part == mutation.part:
                lost.append(check.id)
                feedback[check.id] = verdict.feedback
            else:
                feedback[check.id] = verdict.feedback
        if lost:
            return {"status": "killed", "lost": lost, "feedback": feedback, "errors": [e.describe() for e in errors]}
        for check in self.part_checks(mutation.part):
            for s in EQUIVALENCE_SEEDS:
                observation = observations.get((check.id, s))
                if observation is None:
                    observation = self._roundtrip(self._observe(check, namespace, self._check_seed(s, check.id)))
                if not _same(observation, self.solution[check.id, s], self.noise[check.id, s]):
                    differs.append(f"{check.id} (run seed {s})")
                    break
        if not differs:  # equivalent on its part's probes: do the other parts' probes see it? (for authors)
            for check in self.stage.checks:
                if check.part == mutation.part:
                    continue
                observation = self._roundtrip(self._observe(check, namespace, self._check_seed(GRADING_SEED, check.id)))
                if not _same(observation, self.solution[check.id, GRADING_SEED], self.noise[check.id, GRADING_SEED]):
                    differs.append(f"{check.id} (another part's check)")
            return {"status": "equivalent", "lost": [], "feedback": feedback, "seen_elsewhere": differs,
                    "errors": [e.describe() for e in errors]}
        return {"status": "survived" if differs else "equivalent", "lost": [], "feedback": feedback,
                "differs": differs, "errors": [e.describe() for e in errors]}


class _quiet:
    """Send stdout and stderr (file descriptors too: Numba, C code) to /dev/null for a while."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = (os.dup(1), os.dup(2))
        self.py = (sys.stdout, sys.stderr)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)
        sys.stdout = sys.stderr = open(os.devnull, "w")
        return self

    def __exit__(self, *exc):
        sys.stdout.close()
        sys.stdout, sys.stderr = self.py
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0])
        os.close(self.saved[1])
        return False


def _run_children(runner: StageRunner, mutations: list[Mutation], jobs: int) -> list[Outcome]:
    """Each mutation in a forked child, ``jobs`` at a time; a child that hangs is killed at its timeout."""
    pending = list(enumerate(mutations))
    running: dict[int, tuple] = {}  # read fd -> (index, pid, started, chunks)
    results: dict[int, Outcome] = {}
    while pending or running:
        while pending and len(running) < jobs:
            index, mutation = pending.pop(0)
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child
                os.close(read)
                code = 0
                try:
                    signal.signal(signal.SIGINT, signal.SIG_DFL)
                    null = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(null, 1)
                    os.dup2(null, 2)
                    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
                    try:
                        data = runner.evaluate(mutation)
                    except BaseException as e:  # noqa: BLE001 - whatever the mutant did
                        data = {"status": "crashed", "lost": [], "feedback": {"": f"{type(e).__name__}: {e}"[:300]}}
                    payload = json.dumps(data, default=str).encode()
                    view = memoryview(payload)
                    while view:
                        view = view[os.write(write, view):]
                except BaseException:  # noqa: BLE001
                    code = 1
                finally:
                    os._exit(code)
            os.close(write)
            running[read] = (index, pid, time.monotonic(), [])
        ready, _, _ = select.select(list(running), [], [], 0.2)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                running[fd][3].append(chunk)
                continue
            index, pid, started, chunks = running.pop(fd)
            os.close(fd)
            _, status = os.waitpid(pid, 0)
            mutation = mutations[index]
            try:
                data = json.loads(b"".join(chunks))
            except ValueError:
                data = {"status": "crashed", "lost": [], "feedback": {"": f"the child died (wait status {status})"}}
            results[index] = Outcome(mutation, data["status"], data.get("lost", []), data.get("feedback", {}),
                                     data.get("differs", []), time.monotonic() - started,
                                     data.get("seen_elsewhere", []))
        now = time.monotonic()
        for fd, (index, pid, started, chunks) in list(running.items()):
            if now - started > runner.timeout(mutations[index].part):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(fd)
                del running[fd]
                results[index] = Outcome(mutations[index], "timeout", [], {}, [], now - started)
    return [results[i] for i in range(len(mutations))]


def sample(mutations: list[Mutation], cap: int | None, seed: int) -> list[Mutation]:
    """At most ``cap`` mutants of each part, drawn with a fixed seed (the same draw on every machine)."""
    if cap is None:
        return mutations
    by_part: dict[str, list[Mutation]] = {}
    for m in mutations:
        by_part.setdefault(m.part, []).append(m)
    chosen = []
    for part, found in by_part.items():
        if len(found) <= cap:
            chosen += found
        else:
            rng = random.Random(f"{seed}:{found[0].stage}:{part}")
            picked = sorted(rng.sample(range(len(found)), cap))
            chosen += [found[i] for i in picked]
    return chosen


def run_stage_mutants(stage_key: str, root: Path | None = None, cap: int | None = None, seed: int = 0,
                      jobs: int = 1, justified: dict | None = None) -> StageResult:
    root = Path(root) if root else course_root()
    runner = StageRunner(stage_key, root)
    generated = []
    for part, source in runner.sources().items():
        generated += generate(runner.key, part, source)
    chosen = sample(generated, cap, seed)
    runner.prepare()
    outcomes = _run_children(runner, chosen, max(1, jobs))
    return StageResult(runner.key, len(generated), outcomes,
                       justified if justified is not None else read_justifications(root))


def course_root() -> Path:
    return Path(__file__).resolve().parent.parent.parent


# -- justified survivors (AUTHORING.md) --------------------------------------------------------
JUSTIFICATION_HEADING = "## Mutation survivors"


def read_justifications(root: Path | None = None) -> dict[tuple, str]:
    """The table under "## Mutation survivors" in AUTHORING.md: key -> why the survivor is acceptable.

    Columns: stage | part | operator | before | after | why (code in backticks, ``\\|`` for a bar).
    """
    path = Path(root or course_root()) / "minigrad" / "course" / "AUTHORING.md"
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    if JUSTIFICATION_HEADING not in text:
        return {}
    section = text.split(JUSTIFICATION_HEADING, 1)[1].split("\n## ", 1)[0]
    found = {}
    for line in section.splitlines():
        line = line.strip()
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        if len(cells) != 6 or cells[0] == "stage":
            continue
        stage, part, operator, before, after, why = cells
        found[(stage, part, operator, before.strip("`"), after.strip("`"))] = why
    return found


def justification_row(mutation: Mutation, why: str = "TODO") -> str:
    def cell(x: str) -> str:
        return "`" + x.replace("|", "\\|") + "`"
    return f"| {mutation.stage[:2]} | {mutation.part} | {mutation.operator} | {cell(mutation.before)} | " \
           f"{cell(mutation.after)} | {why} |"


# -- the report ----------------------------------------------------------------------------------
def diagnoses_named(stage_key: str, feedback: dict[str, str]) -> dict[str, list[str]]:
    """check -> the known mistakes (the stage module's DIAGNOSES) that its feedback names."""
    import importlib

    from minigrad.course.stages import _modules

    module = importlib.import_module(f"minigrad.course.stages.{_modules()[stage_key[3:]]}")
    known = getattr(module, "DIAGNOSES", {})
    named = {check: sorted(key for key, phrase in known.items() if phrase in text) for check, text in feedback.items()}
    return {check: keys for check, keys in named.items() if keys}


def outcome_dict(o: Outcome) -> dict:
    m = o.mutation
    return {"stage": m.stage, "part": m.part, "operator": m.operator, "line": m.line, "before": m.before,
            "after": m.after, "status": o.status, "lost": o.lost, "feedback": o.feedback, "differs": o.differs,
            "diagnoses": diagnoses_named(m.stage, o.feedback), "seen_elsewhere": o.seen_elsewhere,
            "seconds": round(o.seconds, 2)}


def format_table(results: list[StageResult]) -> str:
    lines = [f"{'stage':28} {'generated':>9} {'run':>5} {'equiv':>6} {'killed':>7} {'timeout':>7} "
             f"{'survived':>8} {'justified':>9} {'killed%':>8} {'+justified':>10}"]
    for r in results:
        live = r.killed + len(r.survivors)
        share = 100.0 * r.killed / live if live else 100.0
        lines.append(f"{r.stage:28} {r.generated:9d} {len(r.outcomes):5d} {r.count('equivalent'):6d} "
                     f"{r.killed:7d} {r.count('timeout'):7d} {len(r.survivors):8d} {len(r.survivors) - len(r.unjustified):9d} "
                     f"{share:7.1f}% {100.0 * r.score:9.1f}%")
    return "\n".join(lines)


def format_survivors(results: list[StageResult], verbose: bool = False) -> str:
    lines = []
    if verbose:
        for r in results:
            for o in r.outcomes:
                if o.status == "equivalent" and o.seen_elsewhere:
                    lines.append(f"{o.mutation.short()}  [equivalent in its part; another part's check sees it: "
                                 f"{', '.join(o.seen_elsewhere)}]")
    for r in results:
        for o in r.survivors:
            m = o.mutation
            why = r.justified.get(m.key)
            lines.append(f"{m.short()}" + (f"  [justified: {why}]" if why else "  [NOT JUSTIFIED]"))
            if verbose:
                lines.append(f"    differs from the solution on: {', '.join(o.differs)}")
                if not why:
                    lines.append("    AUTHORING.md row: " + justification_row(m))
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m minigrad.course mutate",
                                     description="Mutation testing of the stages' checks (see minigrad/course/mutation.py).")
    add_arguments(parser)
    return run_cli(parser.parse_args(argv))


def add_arguments(parser) -> None:
    parser.add_argument("--stages", default="", help="comma-separated stage numbers or names (default: all)")
    parser.add_argument("--cap", type=_caps, default={}, metavar="N[,NN=M...]",
                        help="at most N mutants per part, drawn with --seed (NN=M: M for stage NN), e.g. 20,07=4")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample drawn under --cap")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="mutants run at once (forked children)")
    parser.add_argument("--report", action="store_true",
                        help="also list where each survivor differs, with a row for AUTHORING.md's table")
    parser.add_argument("--list", action="store_true", help="only list the mutants generated, run nothing")
    parser.add_argument("--root", type=Path, default=None, help="the course checkout (default: this one)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="also write every mutant's outcome (status, lost checks, feedback) to PATH")


def use_fork_safe_threads() -> None:
    """Numba's ``workqueue`` threading layer: the children forked after a ``parallel=True`` kernel ran
    in this process can run it too (GNU OpenMP's layer terminates them). Only before the first launch."""
    os.environ["NUMBA_THREADING_LAYER"] = "workqueue"
    if "numba" in sys.modules:
        sys.modules["numba"].config.THREADING_LAYER = "workqueue"


def _caps(text: str) -> dict:
    """``"20,07=4"`` -> ``{"": 20, "07": 4}``: a cap for every stage, and stages' own."""
    caps = {}
    for item in text.split(","):
        stage, _, value = item.rpartition("=")
        caps[stage.strip()] = int(value)
    return caps


def run_cli(args) -> int:
    use_fork_safe_threads()
    root = args.root or course_root()
    keys = sorted(p.stem for p in (root / "solutions").glob("[0-9][0-9]_*.ipynb"))
    if args.stages:
        wanted = [s.strip() for s in args.stages.split(",") if s.strip()]
        keys = [k for k in keys if any(k == w or k[:2] == w or k[3:] == w for w in wanted)]
    if args.list:
        for key in keys:
            runner = StageRunner(key, root)
            for part, source in runner.sources().items():
                for m in sample(generate(runner.key, part, source), args.cap.get(key[:2], args.cap.get("")),
                                args.seed):
                    print(m.short())
        return 0
    results = []
    justified = read_justifications(root)
    for key in keys:
        start = time.monotonic()
        result = run_stage_mutants(key, root, args.cap.get(key[:2], args.cap.get("")), args.seed, args.jobs,
                                   justified)
        results.append(result)
        print(f"{key}: {len(result.outcomes)} mutants in {time.monotonic() - start:.0f} s", file=sys.stderr)
    print(format_table(results))
    if args.json:
        args.json.write_text(json.dumps([outcome_dict(o) for r in results for o in r.outcomes], indent=1))
    survivors = format_survivors(results, verbose=args.report)
    if survivors:
        print("\nsurvivors (stage part operator line: solution -> mutant)"
              + (", and equivalents that another part's check sees:" if args.report else ":"))
        print(survivors)
    return 0 if all(not r.unjustified for r in results) else 1
