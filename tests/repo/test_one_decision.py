"""The tool format is decided once: looked up by name in one module, checked in one function.

``fcenv.chat_mode.ChatMode`` resolves a tool format's name to its ``ToolFormat``; every other
module of the package takes the object from a ``ChatMode`` (or from the env, which makes one of
its keywords). A second lookup by name would be a second decision that can drift from the first
(another default, "" read otherwise than None). What a tool format leaves no place for (a system
prompt, a decoder) is refused by ``fcenv.chat_mode.mode_conflicts`` alone.

Scripts outside the package (bench/, harness/, datasets/) and the tests name formats to write
answers in; they are not held to this.
"""

from __future__ import annotations

import ast

from tests.support.layout import package_modules

# Where the tool format is looked up by name, and why each module may.
LOOKUP_ALLOWED = {
    "fcenv.tool_formats": "defines get_tool_format",
    "fcenv.chat_mode": "ChatMode resolves the name, once",
}
# Who checks what a tool format leaves no place for, and why each module may.
CHECK_ALLOWED = {
    "fcenv.chat_mode": "a ChatMode as it is made: code's and the env's keywords",
    "fcenv.flags": "a command's flags, named as flags, before anything loads",
}


def _sites(name: str, *, imports: bool = True) -> dict[str, list[int]]:
    """For each module of the package that calls ``name`` (or imports it, with ``imports``), the
    lines where it does."""
    found: dict[str, list[int]] = {}
    for module, file in package_modules().items():
        for node in ast.walk(ast.parse(file.read_text(), str(file))):
            imported = imports and isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names)
            called = isinstance(node, ast.Call) and name in (getattr(node.func, "id", None),
                                                             getattr(node.func, "attr", None))
            if imported or called:
                found.setdefault(module, []).append(node.lineno)
    return found


def test_the_tool_format_is_looked_up_by_name_in_chat_mode_only():
    others = {module: lines for module, lines in _sites("get_tool_format").items() if module not in LOOKUP_ALLOWED}
    assert not others, f"take the ToolFormat from a ChatMode (chat_mode.tool_format), not by name: {others}"
    registry = {module: lines for module, lines in _sites("TOOL_FORMATS").items() if module != "fcenv.tool_formats"}
    assert not registry, f"the registry is read through fcenv.chat_mode.ChatMode: {registry}"


def test_what_a_tool_format_leaves_no_place_for_is_checked_in_one_function():
    calls = _sites("tool_format_conflicts", imports=False)
    assert {module: len(lines) for module, lines in calls.items()} == {"fcenv.chat_mode": 1}, \
        f"call fcenv.chat_mode.mode_conflicts, not tool_format_conflicts: {calls}"
    callers = set(_sites("mode_conflicts", imports=False))
    assert callers <= set(CHECK_ALLOWED), f"make a ChatMode, whose making checks it: {callers - set(CHECK_ALLOWED)}"
