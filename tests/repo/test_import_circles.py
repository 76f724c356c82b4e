"""No module of the package imports itself back through others.

test_layers.py holds the packages to one direction; this holds their modules to it. A circle
works only while every import in it stays inside a function or after the names the other side
needs, so moving one import breaks a module that was not touched; it also means neither module
can be read, tested or reused without the other. What two modules share goes in a leaf module
both import (fcenv.problems, fcenv.arguments' UsageError, algos.errors, algos.extras).

Imports are read with ``ast``, wherever they are: at module level, inside functions, and
``importlib.import_module("literal")``. ``import a.b`` counts as importing ``a.b``, not also the
package ``a`` that Python runs first (a package importing its own modules would otherwise be in a
circle with each of them); ``from a import name`` counts as importing ``a``. Imports under
``if TYPE_CHECKING:`` never run and are left out; so are a registry's imports of its entries by
a computed name (``fcenv.handlers.registry``), which are how plug-ins register.
"""

from __future__ import annotations

import ast

from tests.support.layout import package_modules


def _under_type_checking(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return skipped


def _named(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names an import node imports (for ``from X import Y``: X.Y, which is X's
    submodule Y or a name in X)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:  # relative: from the module's own package, one level up per extra dot
            package = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
        return [f"{base}.{alias.name}" for alias in node.names]
    if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "import_module"):
        return [node.args[0].value]
    return []


def import_graph() -> dict[str, dict[str, int]]:
    """For each module, the package's modules it imports, each with the line of its first import."""
    files = package_modules()
    graph = {}
    for module, file in files.items():
        tree = ast.parse(file.read_text(), str(file))
        skipped = _under_type_checking(tree)
        edges: dict[str, int] = {}
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            for name in _named(node, module, file.name == "__init__.py"):
                while name and name not in files:  # a name in a module: that module
                    name = name.rpartition(".")[0]
                if name and name != module:
                    edges.setdefault(name, node.lineno)
        graph[module] = edges
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle per group of modules that reach each other (Tarjan's strongly connected
    components, without recursion), each as a path that starts and ends at the same module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)
    return [_path_through(graph, group) for group in groups]


def _path_through(graph: dict[str, dict[str, int]], group: set[str]) -> list[str]:
    """A shortest way from the group's first module back to itself, inside the group."""
    first = min(group)
    came_from: dict[str, str] = {}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node]):
                if successor == first:
                    path = [node]
                    while path[-1] != first:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), first]
                if successor in group and successor not in came_from:
                    came_from[successor] = node
                    following.append(successor)
        frontier = following
    raise AssertionError(f"no way back to {first} in {sorted(group)}")


def describe(graph: dict[str, dict[str, int]], path: list[str]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(path, path[1:])) + f" -> {path[-1]}"


def test_no_module_imports_itself_back():
    graph = import_graph()
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(f"  {describe(graph, path)}" for path in found)


def test_the_check_finds_a_circle_and_names_it():
    graph = {"a": {"b": 3}, "b": {"c": 5}, "c": {"a": 7, "d": 1}, "d": {}, "e": {"e": 2}}
    assert circles(graph) == [["a", "b", "c", "a"]]
    assert describe(graph, ["a", "b", "c", "a"]) == "a (line 3) -> b (line 5) -> c (line 7) -> a"


def test_the_graph_sees_imports_inside_functions_and_by_name():
    """The kinds of import the four import circles we once had were made of, read from the repository."""
    graph = import_graph()
    assert "fcenv.sources.resolve" in graph["fcenv.data"]  # module level
    assert "fcenv.loader" in graph["fcenv.sources.resolve"]  # inside mixed()
    assert "fcenv.algos.train" in graph["fcenv.algos.commands"]  # importlib.import_module("fcenv.algos.train")
    assert "fcenv.arguments" in graph["fcenv.sources.report"]  # inside a function
