"""Random call sequences for the group-b differential tests (no tests here).

Each class gets value pools drawn from its scenario (ids, names, codes), a few
state-building calls (log in, start the engine, book a flight) mixed in, and ids that
earlier calls hand out (bookings, cards, tokens, orders, tickets) fed back into the pools.
To learn those ids a sequence is generated while it runs on our own backend; the oracle
then replays the same calls, so a wrong id on our side shows up as a mismatch.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

from fcenv.backends import backend_class
from tests.support.backend_differential import result_string
from tests.support.tickets_trading_travel_vehicle_calls import (
    WEIRD_STRINGS,
    WEIRD_VALUES,
    CallGenerator,
)

# fmt: off
DATES = ["2024-09-01", "2024-09-02", "2024-10-27", "2026-11-15", "2026-11-16", "2026-1-5",
         "2026-13-01", "bad", "", "2024-09-01 10:00:00"]
CITIES = ["Rivermist", "Stonebrook", "San Francisco", "Silverpine", "Crescent Hollow",
          "Autumnville", "London", "Tokyo", "rivermist", "Nowhere"]
ZIPCODES = ["83214", "94016", "74532", "62947", "56108", "47329", "52013", "69238", "51479",
            "71354", "83462", "08540", "94704", "00000", "99999"]
AIRPORTS = ["SFO", "LAX", "JFK", "ORD", "BOS", "RMS", "SBK", "CRH", "PEK", "HND", "LHR", "CDG",
            "CIA", "GFD", "sfo", "XXX"]
CURRENCIES = ["USD", "RMB", "EUR", "JPY", "GBP", "CAD", "AUD", "INR", "RUB", "BRL", "MXN", "usd",
              "XYZ"]
SYMBOLS = ["AAPL", "GOOG", "TSLA", "MSFT", "NVDA", "ALPH", "OMEG", "QUAS", "NEPT", "SYNX", "ZETA",
           "AMZN", "aapl", "ZZZ"]
COMPANIES = ["Apple", "Google", "Tesla", "Microsoft", "Nvidia", "Zeta Corp", "Alpha Tech",
             "Omega Industries", "Quasar Ltd.", "Neptune Systems", "Synex Solutions", "Amazon",
             "Gorilla", "apple", "Apple Inc", "Nobody"]
DOORS = ["driver", "passenger", "rear_left", "rear_right"]
# fmt: on


def _ticket_pools(scenario: dict) -> dict[str, list]:
    ids = [
        t.get("id") for t in scenario.get("ticket_queue", []) if isinstance(t, dict) and "id" in t
    ]
    counter = scenario.get("ticket_counter", 1)
    counter = counter if type(counter) is int else 1
    return {
        "ticket_id": ids + [counter, counter + 1, 1, 2, 999, str(counter)],
        "title": ["Login issue", "Refund", "", "ünïcødé"],
        "description": ["Detailed", "", "x" * 100],
        "priority": [1, 2, 3, 4, 5, 6, 0, -1, 2.5, "3"],
        "status": ["Open", "open", "Closed", "Resolved", "In Progress", "", None],
        "resolution": ["Fixed", "", None],
        "updates": [
            {"title": "New"},
            {"priority": 5, "status": "Closed"},
            {"description": None},
            {},
            {"bogus": 1},
            {"status": "Resolved", "title": "x", "description": "d"},
            {"priority": "high"},
        ],
        "username": [scenario.get("current_user") or "Michael Thompson", "tester", "", None],
        "password": ["secret", "", None],
    }


def _ticket_hints(scenario: dict) -> list[dict]:
    return [
        {
            "name": "ticket_login",
            "args": [scenario.get("current_user") or "tester", "pw"],
            "kwargs": {},
        },
        {
            "name": "create_ticket",
            "args": [],
            "kwargs": {"title": "Generated", "description": "d", "priority": 3},
        },
        {"name": "get_user_tickets", "args": [], "kwargs": {}},
    ]


def _trading_pools(scenario: dict) -> dict[str, list]:
    stocks = list(scenario.get("stocks", {})) or SYMBOLS[:11]
    orders = [
        int(k) if isinstance(k, str) and k.isdigit() else k for k in scenario.get("orders", {})
    ]
    counter = scenario.get("order_counter", 12446)
    counter = counter if type(counter) is int else 12446
    prices = [
        s.get("price") for s in scenario.get("stocks", {}).values() if isinstance(s, dict)
    ] or [227.16]
    return {
        "symbol": stocks + SYMBOLS,
        "stock": stocks + SYMBOLS,
        "stocks": [stocks[:3], stocks, ["AAPL", "ZZZ"], [], "AAPL"],
        "order_id": orders + [counter, counter + 1, counter + 2, 12345, 12446, str(counter), 1],
        "order_type": ["Buy", "Sell", "buy", "sell", "Hold", ""],
        "price": prices + [1, 0, -5, 1e7, 150.5],
        "amount": [1, 5, 10, 100, 0, -3, 2.5, 1000, 10**6],
        "min_price": [0, 100, 200.5, 1000],
        "max_price": [300, 1000, 5000, 50],
        "threshold": [0.05, 0.1, 0.17, 0.3, -1, 0],
        "sector": ["Technology", "Automobile", "Healthcare", "technology", ""],
        "name": COMPANIES,
        "start_date": DATES + [None],
        "end_date": DATES + [None],
        "username": ["Michael Thompson", "", "user"],
        "password": ["pw", ""],
    }


def _trading_hints(scenario: dict) -> list[dict]:
    return [
        {"name": "trading_login", "args": ["user", "pw"], "kwargs": {}},
        {
            "name": "place_order",
            "args": [],
            "kwargs": {"order_type": "Buy", "symbol": "AAPL", "price": 227.16, "amount": 5},
        },
        {"name": "fund_account", "args": [500.0], "kwargs": {}},
        {"name": "get_transaction_history", "args": [], "kwargs": {}},
    ]


def _travel_pools(scenario: dict) -> dict[str, list]:
    token = scenario.get("access_token")
    cards = list(scenario.get("credit_card_list", {}))
    bookings = list(scenario.get("booking_record", {}))
    return {
        "access_token": [token] * 4 + ["bad", None, ""],
        # No ids of the long-context filler: the reference shares those card dicts between
        # instances (module constants), so touching them would make one oracle request leak
        # into the next; our backend copies them (see the report on this divergence).
        "card_id": cards * 3 + ["nocard", ""],
        "booking_id": bookings * 2 + ["nob", None],
        "insurance_id": ["ins", None],
        "travel_date": DATES,
        "travel_from": AIRPORTS,
        "travel_to": AIRPORTS,
        "travel_class": ["economy", "business", "first", "Economy", "premium"],
        "base_currency": CURRENCIES,
        "target_currency": CURRENCIES,
        "value": [100, 20000.0, 1.5, 0, -10, 3.333],
        "location": CITIES,
        "first_name": [scenario.get("user_first_name"), "Michael", "", None],
        "last_name": [scenario.get("user_last_name"), "Thompson", ""],
        "date_of_birth": ["1990-01-01", "2010-05-05", "bad", "2007-02-29", "1950-12-31"],
        "passport_number": ["US1234567", "P123", "", "US"],
        "budget_limit": [1000, 5000.0, 0, -1, "2000", 1e9],
        "insurance_cost": [50, 1000, 10**6, -5, 0.5],
        "insurance_type": ["comprehensive", "basic"],
        "grant_type": ["read_write", "read", "write", ""],
        "user_first_name": [scenario.get("user_first_name"), "Ann"],
        "user_last_name": [scenario.get("user_last_name"), "Lee"],
        "card_number": ["4111111111111111", "1234", ""],
        "expiration_date": ["12/2026", "bad"],
        "cardholder_name": ["Michael Thompson", ""],
        "card_verification_number": [123, 0, "123"],
        "lastModifiedAfter": ["2024-01-01T00:00:00", None],
        "includeRemoved": ["true", None],
    }


def _travel_hints(scenario: dict) -> list[dict]:
    token = scenario.get("access_token")
    card = next(iter(scenario.get("credit_card_list", {})), "nocard")
    return [
        {
            "name": "book_flight",
            "args": [token, card, "2026-11-15", "SFO", "LAX", "economy"],
            "kwargs": {},
        },
        {
            "name": "book_flight",
            "args": [token, card, "2026-11-16", "RMS", "SBK", "business"],
            "kwargs": {},
        },
        {
            "name": "authenticate_travel",
            "args": [
                "cid",
                "secret",
                "refresh",
                "read_write",
                scenario.get("user_first_name"),
                scenario.get("user_last_name"),
            ],
            "kwargs": {},
        },
        {
            "name": "register_credit_card",
            "args": [token, "4111111111111111", "12/2027", "Ann Lee", 321],
            "kwargs": {},
        },
    ]


def _vehicle_pools(scenario: dict) -> dict[str, list]:
    return {
        "ignitionMode": ["START", "START", "STOP", "start", ""],
        "unlock": [True, False, False, 0, "yes"],
        "door": [
            DOORS,
            ["driver"],
            ["passenger", "rear_left"],
            [],
            ["driver", "driver"],
            ["trunk"],
            "driver",
        ],
        "pedalPosition": [0, 0.5, 1, 1.0, 1.5, -0.1, 0.25],
        "fuelAmount": [0, 5, 10.5, 30, 60, -1, 39.5],
        "temperature": [20, 22.5, 68, -5, 100],
        "unit": ["celsius", "fahrenheit", "Fahrenheit", "kelvin"],
        "fanSpeed": [0, 50, 100, 101, -1, 70],
        "mode": ["auto", "cool", "heat", "defrost", "engage", "release", "on", "off", "bogus"],
        "option": [
            "fuel",
            "battery",
            "doors",
            "climate",
            "headlights",
            "parkingBrake",
            "brakePedal",
            "engine",
            "tires",
        ],
        "speed": [0, 5, 50, 65, 120, 125, 52, -5, "60", 57.5],
        "activate": [True, False, 1, 0],
        "distanceToNextVehicle": [30, 50.5, 0, -10, "100"],
        "cityA": ZIPCODES,
        "cityB": ZIPCODES,
        "city": CITIES,
        "destination": ["456 Oakwood Avenue, Rivermist, 83214", "", "Berkeley"],
        "distance": [10, 100, 209.9, 210, 500, -1, 0],
        "gallon": [1, 2.5, 0, -3],
        "liter": [1, 10, 37.85, -1],
        "messages": [["a", "b"], [], ["ünïcødé"], "text"],
    }


def _vehicle_hints(scenario: dict) -> list[dict]:
    return [
        {"name": "lockDoors", "args": [False, list(DOORS)], "kwargs": {}},
        {"name": "pressBrakePedal", "args": [1.0], "kwargs": {}},
        {"name": "startEngine", "args": ["START"], "kwargs": {}},
        {"name": "setCruiseControl", "args": [65, True, 40], "kwargs": {}},
    ]


def _mutate_ticket(config: dict, rng: random.Random) -> None:
    choice = rng.randrange(5)
    if choice == 0:
        config["current_user"] = rng.choice([None, "", " ", "Michael Thompson", "tester"])
    elif choice == 1:
        config["ticket_counter"] = rng.choice([0, -1, 10**9, 3])
    elif choice == 2:
        config["ticket_queue"] = [
            {"id": 1, "title": "a", "status": "Open", "created_by": "tester", "priority": 2},
            {"id": 2, "created_by": "tester"},
            {"id": "3", "status": "Closed", "created_by": "other"},
        ]
    elif choice == 3:
        config.pop("ticket_queue", None)
    else:
        config["ticket_queue"] = [
            {
                "id": 1,
                "title": "t",
                "status": rng.choice(["Closed", "Resolved", "OPEN"]),
                "created_by": "tester",
            }
        ]
        config["current_user"] = "tester"


def _mutate_trading(config: dict, rng: random.Random) -> None:
    choice = rng.randrange(6)
    if choice == 0:
        config["authenticated"] = not config.get("authenticated", False)
    elif choice == 1:
        config["market_status"] = rng.choice(["Open", "Closed", "open"])
    elif choice == 2:
        config["account_info"] = {
            "account_id": 1,
            "balance": rng.choice([0, 0.5, 10**7, -100.0]),
            "binding_card": 1,
        }
    elif choice == 3:
        config["random_seed"] = rng.randrange(10**6)
    elif choice == 4:
        config["orders"] = {
            "1": {
                "id": 1,
                "order_type": "Sell",
                "symbol": "TSLA",
                "price": 1.0,
                "amount": 1,
                "status": rng.choice(["Open", "Pending", "Completed", "Cancelled"]),
            }
        }
        config["order_counter"] = rng.choice([1, 2, 12446])
    else:
        config["transaction_history"] = [
            {"type": "deposit", "amount": 5, "timestamp": "2024-09-01 00:00:01"},
            {"type": "withdrawal", "amount": 2, "timestamp": "2024-08-31 23:59:59"},
        ]
        config["watch_list"] = rng.choice([[], ["AAPL", "ZZZ"]])


def _mutate_travel(config: dict, rng: random.Random) -> None:
    choice = rng.randrange(6)
    if choice == 0:
        config["token_expires_in"] = rng.choice([0, None, -1, 1])
    elif choice == 1:
        config["access_token"] = rng.choice([None, "", "abc123xyz"])
    elif choice == 2:
        config["budget_limit"] = rng.choice([None, 0, 100.0, 10**9])
    elif choice == 3:
        config["random_seed"] = rng.randrange(10**6)
    elif choice == 4:
        config["credit_card_list"] = {
            "c1": {"card_number": "4111", "balance": rng.choice([0, 250.0, 10**6])},
            "c2": {"card_number": "4222"},
        }
    else:
        config["booking_record"] = {
            "b1": {
                "card_id": "c1",
                "travel_date": "2026-01-02",
                "travel_from": "SFO",
                "travel_to": "LAX",
                "travel_class": "economy",
                "travel_cost": 200.0,
                "transaction_id": "t1",
            }
        }
        config["credit_card_list"] = {"c1": {"card_number": "4111", "balance": 500.0}}


def _mutate_vehicle(config: dict, rng: random.Random) -> None:
    choice = rng.randrange(6)
    if choice == 0:
        config["engineState"] = rng.choice(["running", "stopped"])
    elif choice == 1:
        config["brakePedalStatus"] = "pressed"
        config["brakePedalForce"] = rng.choice([1000.0, 500.0, 1000, 0.0])
    elif choice == 2:
        config["fuelLevel"] = rng.choice([-1.0, 0.0, 50.0, 49.5, 0.1])
    elif choice == 3:
        config["doorStatus"] = {
            door: rng.choice(["locked", "unlocked", "LOCKED"]) for door in DOORS
        }
    elif choice == 4:
        for key in (
            "frontLeftTirePressure",
            "frontRightTirePressure",
            "rearLeftTirePressure",
            "rearRightTirePressure",
        ):
            config[key] = rng.choice([28.0, 30.0, 35.0, 36.5, 40.0])
    else:
        config["remainingUnlockedDoors"] = rng.choice([0, 2, 4])
        config["parkingBrakeStatus"] = rng.choice(["engaged", "released"])


MUTATORS: dict[str, Callable[[dict, random.Random], None]] = {
    "TicketAPI": _mutate_ticket,
    "TradingBot": _mutate_trading,
    "TravelAPI": _mutate_travel,
    "VehicleControlAPI": _mutate_vehicle,
}


# Scenario fields that may hold any value without breaking _load_scenario itself; a
# wrong-typed one shows in which order each method reads and combines its state.
CHAOS_FIELDS = {
    "TicketAPI": ["ticket_counter", "current_user"],
    "TradingBot": ["authenticated", "market_status", "order_counter", "watch_list", "account_info"],
    "TravelAPI": ["access_token", "token_expires_in", "budget_limit", "user_first_name", "user_last_name"],
    "VehicleControlAPI": [
        "fuelLevel", "batteryVoltage", "engineState", "acTemperature", "fanSpeed", "headLightStatus",
        "parkingBrakeStatus", "brakePedalStatus", "brakePedalForce", "distanceToNextVehicle",
        "cruiseStatus", "frontLeftTirePressure", "rearRightTirePressure",
    ],
}  # fmt: skip


def varied_scenario(class_name: str, config: dict, rng: random.Random) -> dict:
    """A copy of ``config`` with, at random, one or two fields set to odd but possible values,
    and now and then one field set to a value of the wrong type."""
    config = copy.deepcopy(config)
    for _ in range(rng.choice([0, 0, 1, 2])):
        MUTATORS[class_name](config, rng)
    if rng.random() < 0.1:
        # No tuples: the scenario travels to the oracle as plain JSON, which has none.
        odd = [v for v in WEIRD_VALUES + WEIRD_STRINGS if not isinstance(v, tuple)]
        config[rng.choice(CHAOS_FIELDS[class_name])] = rng.choice(odd)
    return config


POOLS: dict[str, Callable[[dict], dict[str, list]]] = {
    "TicketAPI": _ticket_pools,
    "TradingBot": _trading_pools,
    "TravelAPI": _travel_pools,
    "VehicleControlAPI": _vehicle_pools,
}
HINTS: dict[str, Callable[[dict], list[dict]]] = {
    "TicketAPI": _ticket_hints,
    "TradingBot": _trading_hints,
    "TravelAPI": _travel_hints,
    "VehicleControlAPI": _vehicle_hints,
}
# Result keys whose values later calls may refer to, and the parameter pool they feed.
_HANDED_OUT = {
    "booking_id": "booking_id",
    "card_id": "card_id",
    "access_token": "access_token",
    "order_id": "order_id",
    "id": "ticket_id",
    "insurance_id": "insurance_id",
}


def _harvest(result: str, pools: dict[str, list]) -> None:
    try:
        value = json.loads(result)
    except ValueError:
        return
    if isinstance(value, dict):
        for key, pool in _HANDED_OUT.items():
            if key in value and isinstance(value[key], (str, int)):
                pools.setdefault(pool, []).extend([value[key]] * 3)


def generate_sequence(
    class_name: str,
    docs: list[dict],
    scenario: dict,
    long_context: bool,
    count: int,
    rng: random.Random,
) -> list[dict]:
    """``count`` calls for one instance of ``class_name``, generated while running on ours."""
    pools = POOLS[class_name](scenario)
    hints = HINTS[class_name](scenario)
    generator = CallGenerator(docs, scenario, pools, rng)
    instance = backend_class(class_name)()
    instance._load_scenario(copy.deepcopy(scenario), long_context=long_context)
    calls = []
    for _ in range(count):
        call = copy.deepcopy(rng.choice(hints)) if rng.random() < 0.2 else generator.call()
        calls.append(call)
        try:
            result: Any = result_string(
                getattr(instance, call["name"])(*call["args"], **call["kwargs"])
            )
        except Exception as exc:  # noqa: BLE001 - errors are results too; nothing to harvest
            result = f"Error during execution: {exc}"
        _harvest(result, pools)
    return calls
