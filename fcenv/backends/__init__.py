"""Stateful tool backends for BFCL's multi-turn and agentic categories, one class per module.

A backend is a plain class named as in BFCL's ``involved_classes``: a no-argument constructor,
``_load_scenario(scenario, long_context=False)`` if stateful, one public method per function doc;
its public attributes are the state BFCL's state check compares. ``backend_class`` resolves a
name (``BACKENDS``), or from another package, BFCL's, for differential tests. Modules:
``file_system``, ``math_api``, ``message_api``, ``posting_api``, ``ticket_api``, ``trading_bot``,
``travel_booking``, ``vehicle_control``; ``memory_kv`` (``bm25``), ``memory_vector``
(``sentence_encoder``, ``exact_search``), ``memory_rec_sum``, ``memory_snapshots``; ``web_search``;
shared: ``long_context``, ``plain_data``. Your own (``register_backend``): docs/your-tools.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from fcenv.handlers.registry import Registry

# class name -> (our module, BFCL's func_source_code module of the same class)
BACKENDS: dict[str, tuple[str, str]] = {
    "GorillaFileSystem": ("fcenv.backends.file_system", "gorilla_file_system"),
    "MathAPI": ("fcenv.backends.math_api", "math_api"),
    "MessageAPI": ("fcenv.backends.message_api", "message_api"),
    "TwitterAPI": ("fcenv.backends.posting_api", "posting_api"),
    "TicketAPI": ("fcenv.backends.ticket_api", "ticket_api"),
    "TradingBot": ("fcenv.backends.trading_bot", "trading_bot"),
    "TravelAPI": ("fcenv.backends.travel_booking", "travel_booking"),
    "VehicleControlAPI": ("fcenv.backends.vehicle_control", "vehicle_control"),
    "MemoryAPI_kv": ("fcenv.backends.memory_kv", "memory_kv"),
    "MemoryAPI_vector": ("fcenv.backends.memory_vector", "memory_vector"),
    "MemoryAPI_rec_sum": ("fcenv.backends.memory_rec_sum", "memory_rec_sum"),
    "WebSearchAPI": ("fcenv.backends.web_search", "web_search"),
}
STATELESS = frozenset({"MathAPI"})
# The doc file in multi_turn_func_doc/ that describes each class's public methods.
FUNC_DOC_FILES: dict[str, str] = {name: f"{bfcl}.json" for name, (_, bfcl) in BACKENDS.items()}


@dataclass(frozen=True)
class UserBackend:
    cls: type
    docs: list[dict]


# Users' backends; the built-in classes stay the fixed table above (their modules load on first
# use, and each has a twin in BFCL's code for the differential tests). An entry point in the
# ``fcenv.backends`` group names the class itself.
USER_BACKENDS: Registry[UserBackend | type] = Registry("tool backend", "fcenv.backends", (), "fcenv.backends")


def register_backend(name: str | None = None, *, docs: list[dict] | None = None) -> Callable[[type], type]:
    """A class decorator: the class becomes a tool backend called ``name`` (default: the class's
    name), with ``docs`` its function docs (default: its ``FUNCTION_DOCS`` attribute, if any)."""

    def decorator(cls: type) -> type:
        key = name or cls.__name__
        if key in BACKENDS:
            raise ValueError(f"backend {key!r} is one of the built-in classes; choose another name")
        USER_BACKENDS.register(key, UserBackend(cls, list(docs if docs is not None else getattr(cls, "FUNCTION_DOCS", []))))
        return cls

    return decorator


def known_backends() -> list[str]:
    return sorted({*BACKENDS, *USER_BACKENDS.names()})


def user_backend(name: str) -> UserBackend | None:
    """The registered backend called ``name`` (None for the built-in classes and unknown names)."""
    if name in BACKENDS or name not in USER_BACKENDS:
        return None
    entry = USER_BACKENDS.get(name)
    return entry if isinstance(entry, UserBackend) else UserBackend(entry, list(getattr(entry, "FUNCTION_DOCS", [])))


def is_stateless(name: str) -> bool:
    """Built-in stateless classes, and user classes without ``_load_scenario``."""
    user = user_backend(name)
    return name in STATELESS if user is None else not hasattr(user.cls, "_load_scenario")


def backend_class(name: str, package: str | None = None) -> type:
    """The class called ``name``: ours or a registered one, or from ``package`` (a module
    prefix such as ``bfcl_eval.eval_checker.multi_turn_eval.func_source_code``) when given."""
    user = user_backend(name)
    if user is not None and package is None:
        return user.cls
    try:
        ours, theirs = BACKENDS[name]
    except KeyError:
        raise KeyError(f"unknown backend class {name!r}; known: {known_backends()}") from None
    module = importlib.import_module(f"{package}.{theirs}" if package else ours)
    return getattr(module, name)
