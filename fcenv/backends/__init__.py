"""Stateful tool backends for BFCL's multi-turn categories.

Each backend is an ordinary class in its own module, named as in BFCL's
``involved_classes``. A class has a no-argument constructor, ``_load_scenario(scenario,
long_context=False)`` for stateful ones, and one public method per function doc in
``multi_turn_func_doc/``. Public attributes (names without a leading underscore) are the
state that BFCL's state check compares.

``backend_class(name, module=...)`` resolves a class name, by default from this package;
pass another module prefix (e.g. BFCL's own ``func_source_code`` package) to swap in a
backend with the same class names for differential tests.
"""

from __future__ import annotations

import importlib

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
}
STATELESS = frozenset({"MathAPI"})
# The doc file in multi_turn_func_doc/ that describes each class's public methods.
FUNC_DOC_FILES: dict[str, str] = {name: f"{bfcl}.json" for name, (_, bfcl) in BACKENDS.items()}


def backend_class(name: str, package: str | None = None) -> type:
    """The class called ``name``: ours, or from ``package`` (a module prefix such as
    ``bfcl_eval.eval_checker.multi_turn_eval.func_source_code``) when given."""
    try:
        ours, theirs = BACKENDS[name]
    except KeyError:
        raise KeyError(f"unknown backend class {name!r}; known: {sorted(BACKENDS)}") from None
    module = importlib.import_module(f"{package}.{theirs}" if package else ours)
    return getattr(module, name)
