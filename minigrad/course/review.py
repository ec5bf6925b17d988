"""Static review of a learner's cells: what an instructor should look at by hand.

Flags never change a score. They point at code that imports another autograd
library, calls minigrad's own implementation of the very thing the stage asks the
learner to write (``Stage.forbidden``, or the built-in list below), or reaches
into the grader or the process (``minigrad.course``, ``ctypes``, ``os.fork``...).
This runs in the trusted grader on the source text (``ast``): nothing is executed.
The sandbox adds dynamic flags of the same shape (``source: "dynamic"``).
"""
from __future__ import annotations

import ast

from minigrad.course.grading.sandbox_child import AUTOGRAD_LIBRARIES

# Stages that do not (yet) declare ``forbidden`` themselves.
BUILTIN_FORBIDDEN: dict[str, dict[str, tuple[str, ...]]] = {
    "topological_backward": {
        "topological_order": ("minigrad.autograd.engine.topological_order", "minigrad.Tensor.backward",
                              "minigrad.autograd.backward", "minigrad.autograd.grad",
                              "minigrad.autograd.engine.run_backward"),
        "run_backward": ("minigrad.autograd.engine.run_backward", "minigrad.Tensor.backward",
                         "minigrad.autograd.backward", "minigrad.autograd.grad",
                         "minigrad.autograd.differentiate.backward"),
    },
}

TAMPERING_MODULES = ("minigrad.course", "ctypes", "cffi")
TAMPERING_CALLS = ("os.fork", "os.forkpty", "os.kill", "os.killpg", "os._exit", "os.write", "os.dup2",
                   "os.close", "os.setsid", "signal.signal", "sys.settrace", "sys.setprofile", "sys._getframe",
                   "subprocess.Popen", "subprocess.run", "os.system", "multiprocessing.Process")


def forbidden_for(stage) -> dict[str, tuple[str, ...]]:
    """grade_id -> forbidden dotted names, from the Stage or the built-in list."""
    own = getattr(stage, "forbidden", None)
    return dict(own) if own else dict(BUILTIN_FORBIDDEN.get(stage.name, {}))


def _aliases(trees: list[ast.AST]) -> dict[str, str]:
    """Local name -> dotted path it was imported as, over the whole program."""
    names: dict[str, str] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        names[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        names[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = aliases.get(node.id)
    if head is None:
        return None
    return ".".join([head, *reversed(parts)])


def _constant_string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def review_cells(stage, learner: dict[str, str], others: list[str] = ()) -> list[dict]:
    """Flags for the learner's cells (``grade_id -> source``, and ``"added cell N" -> source`` for the
    cells they added); ``others``: the template's code."""
    trees, parsed = [], {}
    for source in others:
        try:
            trees.append(ast.parse(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    for gid, source in learner.items():
        try:
            parsed[gid] = ast.parse(source)
            trees.append(parsed[gid])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    aliases = _aliases(trees)
    forbidden = forbidden_for(stage)
    flags: list[dict] = []
    seen: set = set()

    def flag(kind: str, gid: str, node: ast.AST, detail: str) -> None:
        key = (kind, gid, detail)
        if key not in seen and len(flags) < 50:
            seen.add(key)
            flags.append({"kind": kind, "part": gid, "line": getattr(node, "lineno", None), "detail": detail,
                          "source": "static"})

    everything = tuple(dict.fromkeys(t for targets in forbidden.values() for t in targets))
    for gid, tree in parsed.items():
        # A cell the learner added (a helper) may hold any part's code.
        targets = everything if gid.startswith("added cell") else forbidden.get(gid, ())
        last = {t.rsplit(".", 1)[-1]: t for t in targets}
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for node in ast.walk(tree):
            modules = []
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules = [node.module]
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if full in targets:
                        flag("reference_call", gid, node, f"imports {full}, minigrad's own version of this part")
                    elif alias.name == "*" and any(t.startswith(node.module + ".") for t in targets):
                        flag("reference_call", gid, node, f"imports * from {node.module}")
            elif isinstance(node, ast.Call):
                func = _dotted(node.func, aliases) or ""
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                arg = _constant_string(node.args[0]) if node.args else None
                if arg and (name == "__import__" or func.endswith("import_module")):
                    modules = [arg]
                if name == "getattr" and len(node.args) >= 2:
                    attr = _constant_string(node.args[1])
                    if attr in last:
                        flag("reference_call", gid, node, f"getattr(..., {attr!r}) (like {last[attr]}): minigrad's own "
                                                          "version of what this part asks for")
                if func in TAMPERING_CALLS:
                    flag("tampering", gid, node, f"calls {func}")
            elif isinstance(node, ast.Attribute) and node.attr in last:
                target = last[node.attr]
                resolved = _dotted(node, aliases)
                # `engine.run_backward` resolved through the imports, or `<anything>.backward(...)`
                # called on an object the imports do not tell (a tensor): `x.grad` alone is fine.
                if resolved == target or (resolved is None and id(node) in called):
                    what = f"uses {target}" if resolved == target else f"calls .{node.attr}() (like {target})"
                    flag("reference_call", gid, node, f"{what}: minigrad's own version of what this part asks for")
            elif isinstance(node, ast.Attribute) and node.attr in ("_getframe", "settrace", "setprofile", "f_back",
                                                                     "f_globals", "__code__"):
                flag("tampering", gid, node, f"uses .{node.attr}")
            for module in modules:
                top = module.split(".")[0]
                if top in AUTOGRAD_LIBRARIES:
                    flag("autograd_import", gid, node, f"imports {module} (another autograd library)")
                if any(module == m or module.startswith(m + ".") for m in TAMPERING_MODULES):
                    flag("tampering", gid, node, f"imports {module}")
    return flags


def describe_flag(flag: dict) -> str:
    where = f"cell '{flag.get('part')}'" + (f", line {flag['line']}" if flag.get("line") else "")
    return f"{where}: {flag.get('detail')} [{flag.get('source', 'static')}]"
