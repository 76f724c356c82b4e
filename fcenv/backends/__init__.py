"""Stateful tool backends for BFCL's multi-turn categories.

Each backend is an ordinary class in its own module, named as in BFCL's
``involved_classes``. A class has a no-argument constructor, ``_load_scenario(scenario,
long_context=False)`` for stateful ones, and one public method per function doc in
``multi_turn_func_doc/``. Public attributes (names without a leading underscore) are the
state that BFCL's state check compares.

``backend_class(name, package=...)`` resolves a class name, by default from this package;
pass another module prefix (e.g. BFCL's own ``func_source_code`` package) to swap in a
backend with the same class names for differential tests.

Your own backends: ``register_backend(docs=[...])`` on a class (or an entry point in the
``fcenv.backends`` group naming ``module:Class``, whose class may carry ``FUNCTION_DOCS``)
makes it usable in ``involved_classes`` of multi-turn tasks in BFCL's format. A backend is a
plain class: a no-argument constructor, optionally ``_load_scenario(scenario,
long_context=False)`` for its ``initial_config``, and one public method per function; its
public attributes are the state BFCL's state check compares. Calls reach only its public
methods, with literal arguments.

Modules, one class each: ``file_system`` (GorillaFileSystem), ``math_api`` (MathAPI),
``message_api`` (MessageAPI), ``posting_api`` (TwitterAPI), ``ticket_api`` (TicketAPI),
``trading_bot`` (TradingBot), ``travel_booking`` (TravelAPI), ``vehicle_control``
(VehicleControlAPI), and for the memory categories ``memory_kv`` (MemoryAPI_kv, ranking keys
with ``bm25``), ``memory_vector`` (MemoryAPI_vector: ``sentence_encoder`` embeds, ``exact_search``
ranks) and ``memory_rec_sum`` (MemoryAPI_rec_sum); and what they share:
``long_context`` (BFCL's filler data), ``plain_data`` (fast deep copies) and
``memory_snapshots`` (how memory passes from one conversation to the next).
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
