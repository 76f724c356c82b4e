"""The world a multi-turn task is played in: the classes' starting states, and the ground truth
run on the package's own backends as it is written.

A task is written turn by turn against a live ``ToolSession``: each request's calls run when they
are chosen, so a later request can name what only an earlier result showed (an order's id, a
found file's folder, a stock's price), and every call of the ground truth is known to succeed.
The states are invented here (names, files, tweets, tickets); the fixed tables of the backends
(airports, routes, zip codes, company symbols) are the only facts taken from them.
"""

from __future__ import annotations

import ast
import json
import random
from dataclasses import dataclass, field
from typing import Any

from fcenv.multi_turn.executor import ToolSession, call_text, is_error_result

PEOPLE = ["Amara", "Bilal", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana", "Ines", "Jonas", "Kofi", "Lena",
          "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tomas", "Uma", "Viktor", "Wren", "Yusuf"]
HANDLES = ["sunny_dev", "data_wizard", "trail_runner", "night_owl", "pixel_pusher", "green_thumb", "code_monk",
           "coffee_addict", "bookworm42", "city_cyclist", "jazz_fan", "maker_mia", "astro_ben", "chef_lou"]
TOPICS = ["budget", "launch", "hiring", "roadmap", "inventory", "security", "onboarding", "migration", "survey",
          "pricing", "backup", "invoice"]
WORDS = ["alpha", "harbor", "maple", "quartz", "ember", "cobalt", "willow", "summit", "lumen", "cedar", "delta",
         "orbit", "falcon", "ridge", "nova", "atlas"]
LINE_STARTS = ["Action item:", "Note:", "Todo:", "Status:", "Owner:", "Risk:", "Decision:", "Question:", "Result:"]
FOLDERS = ["reports", "drafts", "archive", "projects", "photos", "music", "notes", "invoices", "research", "tmp",
           "backups", "designs", "logs", "clients", "scripts", "data"]
EXTENSIONS = [".txt", ".md", ".csv", ".log", ".py", ".json"]


@dataclass
class World:
    """One task's classes, their starting states and the session the ground truth runs on."""

    rng: random.Random
    classes: list[str]
    config: dict[str, Any]
    crowded: bool = False
    session: ToolSession = field(init=False)
    # What earlier turns left for later ones to refer to ("that ticket", "the file you found").
    memory: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.session = ToolSession(self.classes, self.config)

    def instance(self, cls: str) -> Any:
        return self.session.instances[cls]

    def run(self, function: str, /, **arguments: Any) -> tuple[str, Any]:
        """Run one call on the session: its text (the ground truth's form) and its result, read
        back into Python. A call of the ground truth must succeed."""
        text = call_text(function, arguments)
        result = self.session.execute_text(text)
        if is_error_result(result) or _reports_error(result):
            raise GenerationError(f"{text} failed: {result[:200]}")
        return text, _parsed(result)


class GenerationError(Exception):
    """A request that cannot be written in this world's state; the generator draws another."""


def _reports_error(result: str) -> bool:
    # Backends report a refused call as data ({"error": ...}, a False status) rather than raising.
    parsed = _parsed(result)
    items = parsed if isinstance(parsed, list) else [parsed]
    for item in items:
        if isinstance(item, dict) and ("error" in item or item.get("booking_status") is False
                                       or item.get("insurance_status") is False or item.get("cancel_status") is False):
            return True
    return isinstance(parsed, str) and parsed.startswith("Error")


def _parsed(result: str) -> Any:
    for read in (json.loads, ast.literal_eval):
        try:
            return read(result)
        except (ValueError, SyntaxError):
            continue
    return result


# --------------------------------------------------------------------------- starting states


def text_lines(rng: random.Random, topic: str, count: int) -> str:
    """A file's text: short lines, some of them about ``topic`` (which grep can find)."""
    lines = []
    for i in range(count):
        start = rng.choice(LINE_STARTS)
        if i % 3 == 0:
            lines.append(f"{start} {topic} {rng.choice(WORDS)} {rng.randint(1, 99)}")
        else:
            lines.append(f"{start} {rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randint(1, 99)}")
    return "\n".join(lines)


def number_lines(rng: random.Random, count: int) -> tuple[str, list[int]]:
    values = [rng.randint(3, 250) for _ in range(count)]
    return "\n".join(str(v) for v in values), values


def file_system_state(rng: random.Random, crowded: bool) -> dict[str, Any]:
    """A home folder with two or three subfolders, one of them nested, each with a few files."""
    def files(count: int) -> dict[str, Any]:
        out = {}
        while len(out) < count:
            topic = rng.choice(TOPICS)
            name = f"{topic}_{rng.choice(WORDS)}{rng.choice(EXTENSIONS)}"
            if name in out:
                continue
            if name.endswith(".csv") and rng.random() < 0.6:
                content = number_lines(rng, rng.randint(3, 6))[0]
            else:
                content = text_lines(rng, topic, rng.randint(3, 12 if crowded else 6))
            out[name] = {"type": "file", "content": content}
        return out

    per_folder = (6, 14) if crowded else (1, 4)
    names = rng.sample(FOLDERS, 4 if crowded else 3)
    top = {name: {"type": "directory", "contents": files(rng.randint(*per_folder))} for name in names[:-1]}
    nested = rng.choice(names[:-1])
    top[nested]["contents"][names[-1]] = {"type": "directory", "contents": files(rng.randint(*per_folder))}
    top.update(files(rng.randint(1, 3) if not crowded else rng.randint(6, 12)))
    if rng.random() < 0.3:
        top[".config"] = {"type": "file", "content": "theme=dark\nautosave=on"}
    home = rng.choice([p.lower() for p in PEOPLE] + ["workspace", "home"])
    return {"root": {home: {"type": "directory", "contents": top}}}


def message_state(rng: random.Random, crowded: bool) -> dict[str, Any]:
    people = rng.sample(PEOPLE, 14 if crowded else rng.randint(4, 7))
    ids = rng.sample(range(100, 999), len(people))
    user_map = {name: f"USR{number}" for name, number in zip(people, ids)}
    me = people[0]
    inbox = []
    for _ in range(rng.randint(20, 35) if crowded else rng.randint(1, 4)):
        receiver = user_map[rng.choice(people[1:])]
        inbox.append({receiver: f"About the {rng.choice(TOPICS)}: {rng.choice(WORDS)} is {rng.choice(['ready', 'late', 'blocked', 'done'])}."})
    logged_in = rng.random() < 0.6
    return {"user_map": user_map, "user_count": len(people), "inbox": inbox, "message_count": len(inbox),
            "current_user": user_map[me] if logged_in else None, "random_seed": rng.randint(1, 10 ** 6),
            "_me": me}


def posting_state(rng: random.Random, crowded: bool) -> dict[str, Any]:
    handles = rng.sample(HANDLES, 6)
    me = handles[0]
    tweets = {}
    for i in range(rng.randint(18, 30) if crowded else rng.randint(2, 5)):
        author = me if rng.random() < 0.5 else rng.choice(handles[1:])
        topic = rng.choice(TOPICS)
        tweets[str(i)] = {"id": i, "username": author, "content": f"Thoughts on {topic}: {rng.choice(WORDS)} {rng.choice(WORDS)}",
                          "tags": [f"#{topic}"], "mentions": []}
    return {"username": me, "password": f"{rng.choice(WORDS)}{rng.randint(100, 999)}!",
            "authenticated": rng.random() < 0.4, "tweets": tweets, "comments": {}, "retweets": {},
            "following_list": rng.sample(handles[1:], 2), "tweet_counter": len(tweets)}


TICKET_TITLES = ["Printer jam on floor 3", "VPN drops every hour", "Laptop battery swelling", "Cannot reach wiki",
                 "Email quota exceeded", "Monitor flickers", "Badge reader offline", "Slow build server",
                 "Password reset loop", "Projector has no signal", "Calendar sync broken", "Disk almost full"]


def ticket_state(rng: random.Random, crowded: bool) -> dict[str, Any]:
    user = rng.choice(PEOPLE).lower()
    queue = []
    first = rng.randint(1, 40)
    titles = rng.sample(TICKET_TITLES, rng.randint(7, 10) if crowded else rng.randint(1, 4))
    for i, title in enumerate(titles):
        queue.append({"id": first + i, "title": title, "description": f"Reported on {rng.choice(WORDS)} station.",
                      "status": rng.choice(["Open", "Open", "In Progress", "Closed"]), "priority": rng.randint(1, 5),
                      "created_by": user if rng.random() < 0.7 else rng.choice(PEOPLE).lower()})
    return {"ticket_queue": queue, "ticket_counter": first + len(titles),
            "current_user": user if rng.random() < 0.5 else None, "_user": user}


# Company names the backend can look up (its fixed table), with their symbols.
COMPANIES = {"Apple": "AAPL", "Google": "GOOG", "Tesla": "TSLA", "Microsoft": "MSFT", "Nvidia": "NVDA",
             "Zeta Corp": "ZETA", "Alpha Tech": "ALPH", "Omega Industries": "OMEG", "Quasar Ltd.": "QUAS",
             "Neptune Systems": "NEPT", "Synex Solutions": "SYNX"}


def trading_state(rng: random.Random, crowded: bool) -> dict[str, Any]:
    stocks = {}
    for symbol in COMPANIES.values():
        price = round(rng.uniform(20, 900), 2)
        stocks[symbol] = {"price": price, "percent_change": round(rng.uniform(-3, 3), 2),
                          "volume": round(rng.uniform(0.5, 4), 3), "MA(5)": round(price * rng.uniform(0.97, 1.03), 2),
                          "MA(20)": round(price * rng.uniform(0.95, 1.05), 2)}
    orders = {}
    counter = rng.randint(1000, 9000)
    for _ in range(rng.randint(8, 14) if crowded else rng.randint(0, 3)):
        symbol = rng.choice(list(stocks))
        orders[str(counter)] = {"id": counter, "order_type": rng.choice(["Buy", "Sell"]), "symbol": symbol,
                                "price": stocks[symbol]["price"], "amount": rng.randint(1, 40),
                                "status": rng.choice(["Completed", "Pending", "Open"])}
        counter += 1
    return {"orders": orders, "account_info": {"account_id": rng.randint(10000, 99999),
                                               "balance": float(rng.randint(5, 80) * 500),
                                               "binding_card": rng.randint(10 ** 15, 10 ** 16 - 1)},
            "authenticated": rng.random() < 0.5, "market_status": rng.choice(["Open", "Closed"]),
            "order_counter": counter, "stocks": stocks,
            "watch_list": rng.sample(list(stocks), rng.randint(6, 9) if crowded else rng.randint(0, 3)),
            "transaction_history": [], "random_seed": rng.randint(1, 10 ** 6)}


# Cities with an airport in the backend's table, and routes it prices (from the backend's tables).
CITIES = ["Rivermist", "Stonebrook", "Maplecrest", "Silverpine", "Shadowridge", "Sunset Valley", "Oakendale",
          "Willowbend", "Crescent Hollow", "Autumnville", "Pinehaven", "Greenfield", "San Francisco", "Los Angeles",
          "New York", "Chicago", "Boston"]


def travel_state(rng: random.Random, crowded: bool) -> dict[str, Any]:
    first, last = rng.choice(PEOPLE), rng.choice(["Moreau", "Okafor", "Lindqvist", "Tanaka", "Haddad", "Novak",
                                                  "Quispe", "Brennan", "Sato", "Ferreira"])
    cards = {}
    for _ in range(rng.randint(6, 10) if crowded else rng.randint(1, 3)):
        card_id = str(rng.randint(10 ** 11, 10 ** 12 - 1))
        cards[card_id] = {"card_number": str(rng.randint(10 ** 15, 10 ** 16 - 1)), "expiration_date": f"{rng.randint(1, 12):02d}/{rng.randint(27, 32)}",
                          "cardholder_name": f"{first} {last}", "card_verification_number": rng.randint(100, 999),
                          "balance": float(rng.randint(4, 60) * 500)}
    logged_in = rng.random() < 0.5
    state = {"random_seed": rng.randint(1, 10 ** 6), "credit_card_list": cards, "booking_record": {},
             "user_first_name": first, "user_last_name": last, "budget_limit": None, "_client": {
                 "client_id": f"client_{rng.choice(WORDS)}{rng.randint(10, 99)}",
                 "client_secret": f"s{rng.randint(10 ** 5, 10 ** 6)}", "refresh_token": f"r{rng.randint(10 ** 5, 10 ** 6)}"}}
    if logged_in:
        state.update(access_token=f"tok{rng.randint(10 ** 5, 10 ** 6)}", token_type="Bearer", token_expires_in=3600,
                     token_scope="read_write")
    return state


def vehicle_state(rng: random.Random, crowded: bool) -> dict[str, Any]:
    doors = {door: rng.choice(["locked", "unlocked"]) for door in ("driver", "passenger", "rear_left", "rear_right")}
    return {"fuelLevel": float(rng.randint(2, 40)), "batteryVoltage": 12.6, "engineState": "stopped",
            "doorStatus": doors, "acTemperature": float(rng.randint(17, 28)), "fanSpeed": rng.choice([20, 40, 50, 60]),
            "acMode": "auto", "humidityLevel": float(rng.randint(30, 70)), "headLightStatus": "off",
            "parkingBrakeStatus": rng.choice(["engaged", "released"]), "parkingBrakeForce": 0.0, "slopeAngle": 0.0,
            "brakePedalStatus": "released", "brakePedalForce": 0.0, "distanceToNextVehicle": 50.0,
            "cruiseStatus": "inactive", "destination": "None",
            "frontLeftTirePressure": float(rng.choice([26, 30, 32, 35])),
            "frontRightTirePressure": float(rng.choice([26, 30, 32, 35])),
            "rearLeftTirePressure": float(rng.choice([28, 30, 32])), "rearRightTirePressure": float(rng.choice([28, 30, 32]))}


STATES = {"GorillaFileSystem": file_system_state, "MessageAPI": message_state, "TwitterAPI": posting_state,
          "TicketAPI": ticket_state, "TradingBot": trading_state, "TravelAPI": travel_state,
          "VehicleControlAPI": vehicle_state}


def make_world(rng: random.Random, classes: list[str], crowded: bool) -> tuple[World, dict[str, Any]]:
    """A world for ``classes`` and the hints the requests need that are not part of any state
    (the user's own name, a login), kept apart so the entry's ``initial_config`` holds state only."""
    config, hints = {}, {}
    for cls in classes:
        if cls in STATES:
            state = STATES[cls](rng, crowded)
            hints[cls] = {k[1:]: state.pop(k) for k in [k for k in state if k.startswith("_")]}
            config[cls] = state
    world = World(rng, classes, config, crowded)
    world.memory["hints"] = hints
    return world, config
