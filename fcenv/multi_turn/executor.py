"""Run decoded calls on an episode's own backend instances: BFCL's semantics without its ``eval``.

BFCL renders each decoded call back to Python source and ``eval``s it, which is no sandbox. Here
calls stay data (``ToolSession.execute``): a name reaches the public methods of the episode's
instances and nothing else, values are the decoder's literals, and what BFCL's round trip through
source does to them is reproduced structurally (``executable_calls``). Calls only builtins could
answer fail, arguments (``MAX_ARGUMENT_SIZE``) and calls per step (``MAX_STEP_CALLS``) are
bounded, and any exception a backend raises (not ``KeyboardInterrupt``) is the call's error
result. Where we differ from BFCL on purpose: docs/parity.md.
"""

from __future__ import annotations

import ast
import inspect
import json
import keyword
import math
from collections.abc import Iterable
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any

from fcenv.backends import backend_class, is_stateless
from fcenv.backends.plain_data import plain_copy
from fcenv.handlers import Call, DecodeError, decode
from fcenv.handlers.base import MAX_STEP_CALLS
from fcenv.handlers.native import InferenceCrash

ERROR_PREFIX = "Error during execution: "
DISALLOWED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
# Total characters plus container items over all arguments of one call, so one call cannot
# make an episode's state arbitrarily large (BFCL has no bound).
MAX_ARGUMENT_SIZE = 1 << 20


@dataclass(frozen=True)
class NestedCall:
    """A call in argument position, evaluated before the call that receives its result."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


class ExecutionError(Exception):
    """A call that fails before reaching a method; its message is what BFCL reports."""


# --------------------------------------------------------------------------- decoding


def _executable(value: Any) -> Any:
    if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
        if not value:
            raise DecodeError("an empty dict where BFCL expects a nested call")
        name, arguments = next(iter(value.items()))
        return NestedCall(name, {k: _executable(v) for k, v in arguments.items()})
    return value


def executable_calls(calls: Iterable[Call]) -> list[Call]:
    """Decoded calls in the form they execute in, as BFCL's round trip through source text
    leaves them: a dict whose values are all dicts is a nested call ``{name: {kwargs}}`` (BFCL
    renders it as ``name(...)`` from its first key and evaluates it before the outer call); an
    empty dict in that position makes BFCL's decoder fail, so the whole step holds no call. A
    float ``inf`` or ``nan`` in a value fails when run, like BFCL's ``name 'inf' is not
    defined``."""
    return [Call(c.name, {k: _executable(v) for k, v in c.arguments.items()}) for c in calls]


def decode_step(text: str, handler: str = "python", tool_format=None) -> list[Call]:
    """A step's calls in executable form; empty when the text holds none, which ends the
    turn (BFCL's ``decode_execute`` failing or returning nothing). With a ``tool_format``
    (``fcenv.tool_formats``) the family's decoder reads the text, and values stay plain data:
    BFCL runs native calls as ``name(k=repr(v))``, where a dict of dicts is just a dict.
    A step with more than ``MAX_STEP_CALLS`` calls holds none.
    Raises ``fcenv.handlers.native.InferenceCrash`` where BFCL's inference would fail the entry."""
    try:
        if tool_format is not None:
            calls = tool_format.step_calls(text)
        else:
            calls = executable_calls(decode(text, handler))
        if len(calls) > MAX_STEP_CALLS:  # a step runs every call: their number is bounded
            return []
        # BFCL renders every call back to source before running any; a value without a source
        # form (an int over Python's 4,300-digit repr limit) fails there, and the step with it.
        for call in calls:
            call_text(call.name, call.arguments)
    except InferenceCrash:
        raise  # the caller decides: it may fail the whole entry
    except (DecodeError, ValueError, RecursionError):
        return []
    return calls


@lru_cache(maxsize=8192)
def parse_call_text(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """A ground-truth call string (positional arguments allowed) as literal data.

    Cached, since the same ground truth is run for every sample of an entry: callers must
    not mutate what it returns (``ToolSession`` copies values before a method sees them).
    """
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError(f"not a call: {text!r}")
    name = ast.unparse(node.func)
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
    return name, args, kwargs


def is_identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def is_function_name(name: Any) -> bool:
    """An identifier, or identifiers joined by dots (BFCL's ``math.factorial``)."""
    return isinstance(name, str) and all(is_identifier(part) for part in name.split("."))


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """The source form BFCL shows for a call (tool messages are named with it). Always one
    call: a native format's JSON may hold any string as a name, and written as-is an argument
    name like ``"a=1), g(b"`` would read as two calls, so such a name goes in ``**{...}`` and
    such a function name is quoted."""

    def render(value: Any) -> str:
        if isinstance(value, NestedCall):
            return call_text(value.name, value.arguments)
        return repr(value)

    parts = [f"{k}={render(v)}" for k, v in arguments.items() if is_identifier(k)]
    odd = [f"{k!r}: {render(v)}" for k, v in arguments.items() if not is_identifier(k)]
    if odd:
        parts.append("**{" + ", ".join(odd) + "}")
    return f"{name if is_function_name(name) else repr(name)}({', '.join(parts)})"


# --------------------------------------------------------------------------- values


def _size(value: Any, budget: int) -> int:
    """Characters and items in ``value``, counting only up to ``budget`` (iteratively)."""
    total, stack = 0, [value]
    while stack and total <= budget:
        item = stack.pop()
        total += 1
        if isinstance(item, (str, bytes)):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif isinstance(item, NestedCall):
            stack.append(item.arguments)
    return total


def _first_non_finite(value: Any) -> str | None:
    """'inf' or 'nan' if BFCL's repr-then-eval would meet that name inside ``value``."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return "nan" if math.isnan(item) else "inf"
        if isinstance(item, dict):
            # repr order is key, value, key, value...; the stack pops from the end.
            for k, v in reversed(list(item.items())):
                stack.extend([v, k])
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(reversed(list(item)))
    return None


def result_string(value: Any) -> str:
    """What the model is shown for a method's return value, as in BFCL."""
    if isinstance(value, str):
        return str.__str__(value)  # a plain str: a subclass's own methods would run on every use
    if isinstance(value, dict):
        try:
            return json.dumps(value)
        except Exception:
            return str(value)
    return str(value)


def failure_text(exc: BaseException) -> str:
    """What the model is shown when a backend's method fails. An ``Exception`` reads as BFCL
    shows it; anything else a method raises (``SystemExit`` from argparse inside a tool, a
    ``BaseException`` of its own) would end BFCL's process, and is named with its type here.
    An exception whose message cannot be printed is named by its type alone."""
    try:
        text = str(exc) if isinstance(exc, Exception) else f"{type(exc).__name__}: {exc}"
        return ERROR_PREFIX + str.__str__(text)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001  its __str__ is the tool's code too
        return f"{ERROR_PREFIX}{type(exc).__name__} (its message cannot be printed)"


def is_error_result(text: str) -> bool:
    """A failed call: BFCL's execution error, or a backend's ``{"error": ...}`` answer."""
    return text.startswith(ERROR_PREFIX) or text.startswith('{"error"')


# --------------------------------------------------------------------------- sessions





class ToolSession:
    """The backend instances of one episode (the model's, or the ground truth's).

    Names BFCL refuses (``DISALLOWED``, checked on the name or, when dotted, its second part) are
    refused with BFCL's message; any other dotted name or unknown name fails with BFCL's
    ``NameError`` text. Unlike BFCL, no Python builtin or module global runs (``len(...)``,
    ``print(...)``, ``exit.y()``) and method names inside string literals are not rewritten: only
    calls no backend method can answer differ. What a backend's own code does on the model's input
    is the model's failure: any exception it raises (``SystemExit`` and other ``BaseException``
    subclasses included; only ``KeyboardInterrupt`` goes through) becomes the call's error
    result, and so does a return value that cannot be printed. Not bounded: a method that never
    returns, or that ends the process by itself (``os._exit``, a signal); a Python call cannot be
    stopped from outside without a process of its own, which would cost every call of the
    built-in backends.
    """

    def __init__(self, involved_classes: list[str], initial_config: dict[str, Any],
                 long_context: bool = False, backend_package: str | None = None):
        self.instances: dict[str, Any] = {}
        for name in involved_classes:
            instance = backend_class(name, backend_package)()
            if not is_stateless(name):
                instance._load_scenario(plain_copy(initial_config.get(name, {})), long_context=long_context)
            self.instances[name] = instance
        # BFCL routes a method name to the last involved class that has it.
        self.routes: dict[str, Any] = {}
        for instance in self.instances.values():
            for method in public_methods(type(instance)):
                self.routes[method] = instance

    @classmethod
    def for_task(cls, task, backend_package: str | None = None) -> ToolSession:
        return cls(task.involved_classes, task.initial_config, task.long_context, backend_package)

    def public_state(self, class_name: str) -> dict[str, Any]:
        return {k: v for k, v in vars(self.instances[class_name]).items() if not k.startswith("_")}

    # ---------------------------------------------------------------- calling

    def execute(self, call: Call) -> str:
        """One decoded call (as from ``decode_step``), as the result string BFCL would show."""
        refused = _refused_name(call.name)
        if refused:
            return f"{ERROR_PREFIX}Function call {refused} is not allowed."
        if _size(call.arguments, MAX_ARGUMENT_SIZE) > MAX_ARGUMENT_SIZE:
            return f"{ERROR_PREFIX}the arguments are too large (over {MAX_ARGUMENT_SIZE} characters and items)"
        try:
            return result_string(self._invoke(call.name, [], call.arguments))
        except ExecutionError as exc:
            return f"{ERROR_PREFIX}{exc}"
        except RecursionError:
            return f"{ERROR_PREFIX}maximum recursion depth exceeded"
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001  a backend's own error: the model's failure
            return failure_text(exc)

    def execute_text(self, text: str) -> str:
        """One ground-truth call string, positional arguments included."""
        name, args, kwargs = parse_call_text(text)
        refused = _refused_name(name)
        if refused:
            return f"{ERROR_PREFIX}Function call {refused} is not allowed."
        try:
            return result_string(self._invoke(name, args, kwargs))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001
            return failure_text(exc)

    def _invoke(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        method = self._method(name)
        values = {}
        for key, value in kwargs.items():
            if isinstance(value, NestedCall):
                values[key] = self._invoke(value.name, [], value.arguments)
                continue
            bad = _first_non_finite(value)
            if bad:
                raise ExecutionError(f"name '{bad}' is not defined")
            values[key] = plain_copy(value)  # a method must never alias the caller's data
        return method(*plain_copy(args), **values)

    def _method(self, name: str):
        if "." in name:
            raise ExecutionError(f"name '{name.split('.')[0]}' is not defined")
        instance = self.routes.get(name)
        if instance is None:
            raise ExecutionError(f"name '{name}' is not defined")
        return getattr(instance, name)

    # ---------------------------------------------------------------- comparing calls

    def canonical(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> tuple[str, str] | None:
        """A call with its arguments bound to the method's parameters (defaults filled in),
        so a positional ground-truth call and a keyword model call compare equal."""
        instance = self.routes.get(name)
        if instance is None or any(isinstance(v, NestedCall) for v in kwargs.values()):
            return None
        try:
            bound = signature(type(instance), name).bind(*args, **kwargs)
        except TypeError:
            return None
        bound.apply_defaults()
        try:
            return name, repr(sorted(bound.arguments.items(), key=lambda kv: kv[0]))
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001  no printed form (an int over 4,300 digits, a default whose
            return None        # repr fails): matches nothing


@lru_cache(maxsize=None)
def public_methods(cls: type) -> tuple[str, ...]:
    """The names a call may route to: public methods (bound on an instance; so class
    methods too, static methods not). Listing them is slow and classes never change."""
    return tuple(name for name, member in inspect.getmembers(cls)
                 if not name.startswith("_") and (inspect.isfunction(member) or inspect.ismethod(member))
                 and not isinstance(inspect.getattr_static(cls, name), staticmethod))


@lru_cache(maxsize=None)
def signature(cls: type, name: str) -> inspect.Signature:
    """A method's signature without ``self`` (inspect.signature is slow; methods never change)."""
    parameters = list(inspect.signature(getattr(cls, name)).parameters.values())[1:]
    return inspect.Signature(parameters)


def _refused_name(name: str) -> str | None:
    checked = name.split(".")[1] if "." in name else name
    return checked if checked in DISALLOWED else None
