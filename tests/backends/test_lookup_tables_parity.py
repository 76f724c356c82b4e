"""The lookup tables of the group-b backends, checked entry by entry against the reference.

These tables are not in BFCL's data files; they were read off the reference's answers
(airports, routes and fares, exchange rates, zip codes, road distances, company symbols,
sectors). Each test asks both sides the same exhaustive grid of questions, including
names that must not be found, so a missing, extra or wrong entry fails here.
"""

from __future__ import annotations

import pytest

from tests.support.backend_differential import execute_request, run_ours

pytestmark = pytest.mark.oracle

AIRPORTS = [
    "RMS",
    "SBK",
    "MPC",
    "SVP",
    "SHD",
    "CDG",
    "LHR",
    "SSV",
    "OKD",
    "WLB",
    "PEK",
    "HND",
    "HKG",
    "CIA",
    "CRH",
    "ATV",
    "PHV",
    "GFD",
    "SFO",
    "LAX",
    "JFK",
    "ORD",
    "BOS",
]
CITIES = [
    "Rivermist",
    "Stonebrook",
    "Maplecrest",
    "Silverpine",
    "Shadowridge",
    "London",
    "Paris",
    "Sunset Valley",
    "Oakendale",
    "Willowbend",
    "Crescent Hollow",
    "Autumnville",
    "Pinehaven",
    "Greenfield",
    "San Francisco",
    "Los Angeles",
    "New York",
    "Chicago",
    "Boston",
    "Beijing",
    "Hong Kong",
    "Rome",
    "Tokyo",
    "Princeton",
    "Berkeley",
    "rivermist",
    "",
    "Nowhere",
]
CURRENCIES = [
    "USD",
    "RMB",
    "EUR",
    "JPY",
    "GBP",
    "CAD",
    "AUD",
    "INR",
    "RUB",
    "BRL",
    "MXN",
    "CNY",
    "usd",
]
ZIPCODES = [
    "83214",
    "74532",
    "56108",
    "62947",
    "71354",
    "83462",
    "47329",
    "52013",
    "69238",
    "51479",
    "94016",
    "08540",
    "94704",
    "00000",
    "12345",
]
COMPANIES = [
    "Apple",
    "Google",
    "Tesla",
    "Microsoft",
    "Nvidia",
    "Zeta Corp",
    "Alpha Tech",
    "Omega Industries",
    "Quasar Ltd.",
    "Neptune Systems",
    "Synex Solutions",
    "Amazon",
    "Gorilla",
    "Neptune",
    "Ford",
    "apple",
    "Alphabet",
    "Meta",
    "",
]
SECTORS = ["Technology", "Automobile", "Healthcare", "Finance", "Energy", "technology", ""]


def _call(name: str, *args) -> dict:
    return {"name": name, "args": list(args), "kwargs": {}}


def _grid_runs() -> list[tuple[str, str, list[dict], bool]]:
    """(label, class, calls, long_context) for every table."""
    endpoints = AIRPORTS + ["PVG", "XXX"]
    fares = [
        _call("get_flight_cost", a, b, date, travel_class)
        for a in endpoints
        for b in endpoints
        for date, travel_class in (("2026-11-15", "economy"), ("2026-11-16", "first"))
    ]
    return [
        (
            "airports",
            "TravelAPI",
            [_call("list_all_airports")]
            + [_call("get_nearest_airport_by_city", c) for c in CITIES],
            False,
        ),
        ("route fares", "TravelAPI", fares, False),
        (
            "route list (long context)",
            "TravelAPI",
            [_call("get_flight_cost", "SFO", "LAX", "1", "business")],
            True,
        ),
        (
            "exchange rates",
            "TravelAPI",
            [
                _call("compute_exchange_rate", a, b, v)
                for a in CURRENCIES
                for b in CURRENCIES
                for v in (1, 250.0, 3.3)
            ],
            False,
        ),
        (
            "zip codes",
            "VehicleControlAPI",
            [_call("get_zipcode_based_on_city", c) for c in CITIES],
            False,
        ),
        (
            "distances",
            "VehicleControlAPI",
            [_call("estimate_distance", a, b) for a in ZIPCODES for b in ZIPCODES],
            False,
        ),
        ("symbols", "TradingBot", [_call("get_symbol_by_name", c) for c in COMPANIES], False),
        ("sectors", "TradingBot", [_call("get_available_stocks", s) for s in SECTORS], False),
    ]


def test_lookup_tables_match_reference(oracle):
    grids = _grid_runs()
    requests = [execute_request([cls], {}, calls, long_context=lc) for _, cls, calls, lc in grids]
    answers = oracle.run(requests)
    problems = []
    for (label, cls, calls, lc), answer in zip(grids, answers):
        ours = run_ours([cls], {}, calls, long_context=lc)
        for call, mine, ref in zip(calls, ours["results"], answer["results"]):
            if mine != ref:
                where = f"{label}: {call['name']}{tuple(call['args'])}"
                problems.append(f"{where}: ours {mine[:200]!r} != reference {ref[:200]!r}")
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:20])
