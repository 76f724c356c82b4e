"""Short function docs, in our own words, for the package's backends of BFCL's eight multi-turn
classes: ``FUNC_DOCS`` (class name -> its docs, in BFCL's doc shape) and ``write_func_docs``,
which writes them as ``multi_turn_func_doc/`` files (one JSON Lines file per class, BFCL's file
names). The bundled multi-turn split reads them from ``fcenv/bundled/multi_turn_func_doc/``.

Written from the backends' code (``fcenv/backends/``), for a small model: one sentence per
function, a phrase per parameter, enums where a backend takes a fixed set of values, and the
preconditions a call needs (a login, an access token, the current directory). The names,
parameters, required parameters and types follow the methods' signatures
(``tests/env/test_bundled_func_docs.py`` checks them, and that no sentence is BFCL's).
Run ``python datasets/multi_turn/func_docs.py`` to rewrite the bundled files (deterministic).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from fcenv.backends import FUNC_DOC_FILES

OUT = Path(__file__).resolve().parents[2] / "fcenv" / "bundled" / "multi_turn_func_doc"
STR, INT, FLOAT, BOOL, ARRAY, DICT = "string", "integer", "float", "boolean", "array", "dict"
_OPTIONAL = "optional"  # a key of _p's extras: not required, no default shown (the method's is None)


def _p(name: str, kind: str, text: str, **extra: Any) -> tuple[str, dict, bool]:
    """One parameter: (name, its doc, required). ``default=`` or ``optional=True`` make it optional;
    ``items=`` (an array's item type or item schema) and ``enum=`` go into the doc."""
    optional = extra.pop(_OPTIONAL, False) or "default" in extra
    items = extra.pop("items", None)
    doc: dict[str, Any] = {"type": kind, "description": text}
    if items is not None:
        doc["items"] = items if isinstance(items, dict) else {"type": items}
    doc.update(extra)
    return name, doc, not optional


def _f(name: str, text: str, *params: tuple[str, dict, bool]) -> dict:
    return {"name": name, "description": text,
            "parameters": {"type": "dict", "properties": {n: copy.deepcopy(doc) for n, doc, _ in params},
                           "required": [n for n, _, required in params if required]}}


_HERE = "file in the current directory"

FILE_SYSTEM = [
    _f("cat", "Print the text of a file in the current directory.", _p("file_name", STR, _HERE)),
    _f("cd", "Move into a child folder of the current directory, one level per call ('..' goes up).",
       _p("folder", STR, "child folder name, or '..'")),
    _f("cp", "Copy an item of the current directory to a new name, or into a folder there if the "
             "destination is an existing folder.",
       _p("source", STR, "name to copy"), _p("destination", STR, "new name or folder name, no path")),
    _f("diff", "Compare two files of the current directory line by line; returns the lines that differ.",
       _p("file_name1", STR, "first file"), _p("file_name2", STR, "second file")),
    _f("du", "Return the total size of the current directory and all below it.",
       _p("human_readable", BOOL, "use KB/MB units instead of bytes", default=False)),
    _f("echo", "Overwrite an existing file of the current directory with text (make it with touch "
               "first), or only print the text when no file is named.",
       _p("content", STR, "text to write or print"), _p("file_name", STR, "file to overwrite", optional=True)),
    _f("find", "List the paths below a folder whose names contain some text.",
       _p("path", STR, "folder to search from", default="."),
       _p("name", STR, "text the name must contain; omit to list everything", optional=True)),
    _f("grep", "Return the lines of a file in the current directory that contain a pattern.",
       _p("file_name", STR, _HERE), _p("pattern", STR, "text to look for")),
    _f("ls", "List the names in the current directory.",
       _p("a", BOOL, "also show hidden names (starting with '.')", default=False)),
    _f("mkdir", "Create an empty folder in the current directory.", _p("dir_name", STR, "new folder name")),
    _f("mv", "Rename an item of the current directory, or move it into a folder there if the "
             "destination is an existing folder.",
       _p("source", STR, "name to move"), _p("destination", STR, "new name or folder name, no path")),
    _f("pwd", "Return the path of the current directory."),
    _f("rm", "Delete a file, or a folder with all it holds, from the current directory.",
       _p("file_name", STR, "name to delete")),
    _f("rmdir", "Delete an empty folder of the current directory.", _p("dir_name", STR, "folder name")),
    _f("sort", "Return the lines of a file in the current directory in alphabetical order (the file "
               "is not changed).", _p("file_name", STR, _HERE)),
    _f("tail", "Return the last lines of a file in the current directory.",
       _p("file_name", STR, _HERE), _p("lines", INT, "how many lines", default=10)),
    _f("touch", "Create an empty file in the current directory.", _p("file_name", STR, "new file name")),
    _f("wc", "Count the lines, words or characters of a file in the current directory.",
       _p("file_name", STR, _HERE),
       _p("mode", STR, "l: lines, w: words, c: characters", enum=["l", "w", "c"], default="l")),
]

_NUMBERS = _p("numbers", ARRAY, "the numbers", items=FLOAT)
_METRIC = ["km", "m", "cm", "mm", "um", "nm"]
_IMPERIAL = ["cm", "in", "kg", "lb", "km", "miles", "m", "ft", "yd", "celsius", "fahrenheit"]

MATH = [
    _f("absolute_value", "Return a number without its sign.", _p("number", FLOAT, "any number")),
    _f("add", "Return a + b.", _p("a", FLOAT, "first addend"), _p("b", FLOAT, "second addend")),
    _f("divide", "Return a / b (b must not be 0).", _p("a", FLOAT, "dividend"), _p("b", FLOAT, "divisor")),
    _f("imperial_si_conversion", "Convert a value between an imperial unit and its metric partner "
                                 "(cm/in, kg/lb, km/miles, m/ft, m/yd, celsius/fahrenheit).",
       _p("value", FLOAT, "amount to convert"), _p("unit_in", STR, "its unit", enum=_IMPERIAL),
       _p("unit_out", STR, "wanted unit", enum=_IMPERIAL)),
    _f("logarithm", "Return the logarithm of a value in some base, to a number of digits.",
       _p("value", FLOAT, "number to take the log of"), _p("base", FLOAT, "log base"),
       _p("precision", INT, "significant digits")),
    _f("max_value", "Return the largest of some numbers.", _NUMBERS),
    _f("mean", "Return the average of some numbers.", _NUMBERS),
    _f("min_value", "Return the smallest of some numbers.", _NUMBERS),
    _f("multiply", "Return a * b.", _p("a", FLOAT, "first factor"), _p("b", FLOAT, "second factor")),
    _f("percentage", "Return what percent part is of whole.",
       _p("part", FLOAT, "the portion"), _p("whole", FLOAT, "the total, not 0")),
    _f("power", "Return base raised to exponent.", _p("base", FLOAT, "number to raise"),
       _p("exponent", FLOAT, "power to raise it to")),
    _f("round_number", "Round a number to a count of decimal places.", _p("number", FLOAT, "number to round"),
       _p("decimal_places", INT, "digits after the point", default=0)),
    _f("si_unit_conversion", "Convert a length between metric units.", _p("value", FLOAT, "amount to convert"),
       _p("unit_in", STR, "its unit", enum=_METRIC), _p("unit_out", STR, "wanted unit", enum=_METRIC)),
    _f("square_root", "Return the square root of a number that is not negative, to a number of digits.",
       _p("number", FLOAT, "number to take the root of"), _p("precision", INT, "significant digits")),
    _f("standard_deviation", "Return the population standard deviation of some numbers.", _NUMBERS),
    _f("subtract", "Return a - b.", _p("a", FLOAT, "number to take from"), _p("b", FLOAT, "amount taken away")),
    _f("sum_values", "Return the total of some numbers.", _NUMBERS),
]

_LOGIN = "(needs message_login)"

MESSAGE = [
    _f("add_contact", "Add a new user to the workspace; returns the user id it gets.",
       _p("user_name", STR, "name of the new contact")),
    _f("delete_message", f"Delete the latest message you sent to a user id {_LOGIN}.",
       _p("receiver_id", STR, "user id it was sent to")),
    _f("get_message_stats", f"Count the messages you sent and the users they went to {_LOGIN}."),
    _f("get_user_id", "Look up a workspace user's id from their name.", _p("user", STR, "the user's name")),
    _f("list_users", "Return the names of all workspace users."),
    _f("message_get_login_status", "Tell whether someone is logged in to messaging."),
    _f("message_login", "Log in to messaging as the user with this id; sending, viewing, searching "
                        "and deleting messages need it.", _p("user_id", STR, "a user id such as 'USR001'")),
    _f("search_messages", f"Find the messages you sent whose text contains a keyword, ignoring case {_LOGIN}.",
       _p("keyword", STR, "text to look for")),
    _f("send_message", f"Send a message to a user id, found with get_user_id {_LOGIN}.",
       _p("receiver_id", STR, "the receiver's user id"), _p("message", STR, "text to send")),
    _f("view_messages_sent", f"Return the messages you sent, grouped by receiver id {_LOGIN}."),
]

_AUTH = "(needs authenticate_twitter)"
_TWEET = _p("tweet_id", INT, "id of the tweet")

POSTING = [
    _f("authenticate_twitter", "Log in to the social network; posting, retweets, comments and follows need it.",
       _p("username", STR, "account name"), _p("password", STR, "account password")),
    _f("comment", f"Add a comment under a tweet {_AUTH}.", _TWEET, _p("comment_content", STR, "comment text")),
    _f("follow_user", f"Start following a user {_AUTH}.", _p("username_to_follow", STR, "who to follow")),
    _f("get_tweet", "Return one tweet by its id.", _TWEET),
    _f("get_tweet_comments", "Return the comments under a tweet.", _TWEET),
    _f("get_user_stats", "Return how many tweets, follows and retweets a user has.",
       _p("username", STR, "whose counts")),
    _f("get_user_tweets", "Return every tweet a user posted.", _p("username", STR, "whose tweets")),
    _f("list_all_following", f"Return the users you follow {_AUTH}."),
    _f("mention", "Add usernames to the mentions of an existing tweet.", _TWEET,
       _p("mentioned_usernames", ARRAY, "usernames to add", items=STR)),
    _f("post_tweet", f"Publish a tweet as yourself and return it with its id {_AUTH}.",
       _p("content", STR, "tweet text"), _p("tags", ARRAY, "hashtags such as '#news'", items=STR, default=[]),
       _p("mentions", ARRAY, "users such as '@bob'", items=STR, default=[])),
    _f("posting_get_login_status", "Tell whether you are logged in to the social network."),
    _f("retweet", f"Share a tweet again under your name {_AUTH}.", _TWEET),
    _f("search_tweets", "Return the tweets whose text contains a keyword or that carry it as a tag, ignoring case.",
       _p("keyword", STR, "word to look for")),
    _f("unfollow_user", f"Stop following a user {_AUTH}.", _p("username_to_unfollow", STR, "who to drop")),
]

_TICKET = _p("ticket_id", INT, "ticket number")

TICKET = [
    _f("close_ticket", "Set a ticket's status to Closed.", _TICKET),
    _f("create_ticket", "Open a new ticket as the logged-in user; returns it with its id.",
       _p("title", STR, "short summary"), _p("description", STR, "details", default=""),
       _p("priority", INT, "1 (lowest) to 5 (highest)", default=1)),
    _f("edit_ticket", "Change some fields of a ticket.", _TICKET,
       _p("updates", DICT, "new values, by field", properties={
           "title": {"type": STR}, "description": {"type": STR}, "status": {"type": STR}, "priority": {"type": INT}})),
    _f("get_ticket", "Return a ticket by its number.", _TICKET),
    _f("get_user_tickets", "Return the tickets you created, optionally only those in one status (needs ticket_login).",
       _p("status", STR, "e.g. Open, Closed or Resolved; omit for all", optional=True)),
    _f("logout", "Log out of the ticket system."),
    _f("resolve_ticket", "Set a ticket's status to Resolved and record how it was solved.", _TICKET,
       _p("resolution", STR, "what fixed it")),
    _f("ticket_get_login_status", "Tell whether you are logged in to the ticket system."),
    _f("ticket_login", "Log in to the ticket system; creating tickets and listing yours need it.",
       _p("username", STR, "account name"), _p("password", STR, "account password")),
]

_TRADE = "(needs trading_login)"
_ORDER = _p("order_id", INT, "order number")
_SYMBOLS = _p("stocks", ARRAY, "stock symbols", items=STR)

TRADING = [
    _f("add_to_watchlist", "Put a known stock symbol on the watchlist; returns the list.",
       _p("stock", STR, "symbol such as 'AAPL'")),
    _f("cancel_order", "Cancel an order that has not completed.", _ORDER),
    _f("filter_stocks_by_price", "Keep the symbols whose price lies within a range.", _SYMBOLS,
       _p("min_price", FLOAT, "lowest price"), _p("max_price", FLOAT, "highest price")),
    _f("fund_account", f"Deposit money into the trading account and return the new balance {_TRADE}.",
       _p("amount", FLOAT, "sum to add")),
    _f("get_account_info", f"Return the account id, balance and linked card {_TRADE}."),
    _f("get_available_stocks", "List the stock symbols of a sector.",
       _p("sector", STR, "market sector", enum=["Technology", "Automobile"])),
    _f("get_current_time", "Return the market's clock time."),
    _f("get_order_details", "Return an order's type, symbol, price, amount and status.", _ORDER),
    _f("get_order_history", f"Return the ids of all your orders {_TRADE}."),
    _f("get_stock_info", "Return a stock's price, percent change, volume and moving averages.",
       _p("symbol", STR, "stock symbol")),
    _f("get_symbol_by_name", "Find the stock symbol of a company from its exact name, such as 'Apple'.",
       _p("name", STR, "company name")),
    _f("get_transaction_history", f"Return your deposits and withdrawals, optionally between two dates {_TRADE}.",
       _p("start_date", STR, "first day, YYYY-MM-DD", optional=True),
       _p("end_date", STR, "last day, YYYY-MM-DD", optional=True)),
    _f("get_watchlist", f"Return the symbols on the watchlist {_TRADE}."),
    _f("notify_price_change", "Say which of some stocks moved by at least a percent change.", _SYMBOLS,
       _p("threshold", FLOAT, "smallest percent change to report")),
    _f("place_order", f"Place an order to buy or sell shares and return its order id {_TRADE}.",
       _p("order_type", STR, "buy or sell", enum=["Buy", "Sell"]), _p("symbol", STR, "stock symbol"),
       _p("price", FLOAT, "price per share"), _p("amount", INT, "number of shares")),
    _f("remove_stock_from_watchlist", f"Take a symbol off the watchlist {_TRADE}.",
       _p("symbol", STR, "symbol to drop")),
    _f("trading_get_login_status", "Tell whether you are logged in to trading."),
    _f("trading_login", "Log in to the trading account; most account actions need it.",
       _p("username", STR, "account name"), _p("password", STR, "account password")),
    _f("trading_logout", "Log out of the trading account."),
    _f("withdraw_funds", f"Take money out of the account, only while the market is open {_TRADE}.",
       _p("amount", FLOAT, "sum to take out")),
]

_TOKEN = _p("access_token", STR, "token from authenticate_travel")
_BOOKING = _p("booking_id", STR, "booking id")
_CLASS = _p("travel_class", STR, "cabin class", enum=["economy", "business", "first"])
_CURRENCIES = ["USD", "RMB", "EUR", "JPY", "GBP", "CAD", "AUD", "INR", "RUB", "BRL", "MXN"]

TRAVEL = [
    _f("authenticate_travel", "Log in to the travel service and get the access_token that bookings, cards, "
                              "budgets and invoices need.",
       _p("client_id", STR, "app client id"), _p("client_secret", STR, "app client secret"),
       _p("refresh_token", STR, "refresh token"),
       _p("grant_type", STR, "access scope", enum=["read_write", "read", "write"]),
       _p("user_first_name", STR, "traveler's first name"), _p("user_last_name", STR, "traveler's last name")),
    _f("book_flight", "Book a flight paid with a registered card; returns booking and transaction ids.",
       _TOKEN, _p("card_id", STR, "id of a registered card"), _p("travel_date", STR, "YYYY-MM-DD"),
       _p("travel_from", STR, "departure airport code, e.g. 'SFO'"), _p("travel_to", STR, "arrival airport code"),
       _CLASS),
    _f("cancel_booking", "Cancel a booking and refund its card.", _TOKEN, _BOOKING),
    _f("compute_exchange_rate", "Convert an amount between US dollars and another currency (one side must be USD).",
       _p("base_currency", STR, "currency of the amount", enum=_CURRENCIES),
       _p("target_currency", STR, "currency wanted", enum=_CURRENCIES), _p("value", FLOAT, "amount to convert")),
    _f("contact_customer_support", "Send a note about a booking to customer support.", _BOOKING,
       _p("message", STR, "the note")),
    _f("get_all_credit_cards", "Return all registered cards, keyed by card id."),
    _f("get_booking_history", "Return all your bookings, keyed by booking id.", _TOKEN),
    _f("get_budget_fiscal_year", "Return the fiscal year of the travel budget.",
       _p("lastModifiedAfter", STR, "only years changed after this date", optional=True),
       _p("includeRemoved", STR, "'true' to also list removed years", optional=True)),
    _f("get_credit_card_balance", "Return how much is left on a registered card.", _TOKEN,
       _p("card_id", STR, "card id")),
    _f("get_flight_cost", "Return the price in USD of a flight between two airports on a date in a class.",
       _p("travel_from", STR, "departure airport code"), _p("travel_to", STR, "arrival airport code"),
       _p("travel_date", STR, "YYYY-MM-DD"), _CLASS),
    _f("get_nearest_airport_by_city", "Return the code of the airport nearest a city, or 'Unknown'.",
       _p("location", STR, "city name, e.g. 'Rivermist'")),
    _f("list_all_airports", "Return the codes of all airports served."),
    _f("purchase_insurance", "Buy insurance for a booking, charged to a card; returns an insurance id.",
       _TOKEN, _p("insurance_type", STR, "kind of cover"), _BOOKING, _p("insurance_cost", FLOAT, "price in USD"),
       _p("card_id", STR, "card to charge")),
    _f("register_credit_card", "Add a card to your account; returns the card_id to pay with.", _TOKEN,
       _p("card_number", STR, "card number"), _p("expiration_date", STR, "MM/YYYY"),
       _p("cardholder_name", STR, "name on the card"), _p("card_verification_number", INT, "CVV code")),
    _f("retrieve_invoice", "Return the invoice of a booking.", _TOKEN,
       _p("booking_id", STR, "booking to bill", optional=True),
       _p("insurance_id", STR, "insurance id", optional=True)),
    _f("set_budget_limit", "Set a spending limit in USD for bookings and insurance.", _TOKEN,
       _p("budget_limit", FLOAT, "limit in USD")),
    _f("travel_get_login_status", "Tell whether a travel access token has been issued."),
    _f("verify_traveler_information", "Check that a traveler may fly: the logged-in user's name, an adult, "
                                      "and a US passport.",
       _p("first_name", STR, "traveler's first name"), _p("last_name", STR, "traveler's last name"),
       _p("date_of_birth", STR, "YYYY-MM-DD"), _p("passport_number", STR, "passport id, e.g. 'US1234567'")),
]

_DOORS = ["driver", "passenger", "rear_left", "rear_right"]
_STATUS_OPTIONS = ["fuel", "battery", "doors", "climate", "headlights", "parkingBrake", "brakePedal", "engine"]

VEHICLE = [
    _f("activateParkingBrake", "Engage or release the parking brake.",
       _p("mode", STR, "what to do", enum=["engage", "release"])),
    _f("adjustClimateControl", "Set the cabin temperature, fan speed and climate mode.",
       _p("temperature", FLOAT, "target temperature"),
       _p("unit", STR, "temperature unit", enum=["celsius", "fahrenheit"], default="celsius"),
       _p("fanSpeed", INT, "0 to 100", default=50),
       _p("mode", STR, "climate mode", enum=["auto", "cool", "heat", "defrost"], default="auto")),
    _f("check_tire_pressure", "Return the four tire pressures and whether they are healthy."),
    _f("displayCarStatus", "Show one part of the car's state.",
       _p("option", STR, "part to show", enum=_STATUS_OPTIONS)),
    _f("display_log", "Show messages to the driver.", _p("messages", ARRAY, "lines to show", items=STR)),
    _f("estimate_distance", "Return the road distance in km between two places given by zip code.",
       _p("cityA", STR, "zip code of one place (see get_zipcode_based_on_city)"),
       _p("cityB", STR, "zip code of the other")),
    _f("estimate_drive_feasibility_by_mileage", "Tell whether the fuel in the tank is enough to drive a distance.",
       _p("distance", FLOAT, "distance in miles")),
    _f("fillFuelTank", "Add fuel to the tank, which holds at most 50 gallons.",
       _p("fuelAmount", FLOAT, "gallons to add")),
    _f("find_nearest_tire_shop", "Return the address of the closest tire shop."),
    _f("gallon_to_liter", "Convert gallons to liters.", _p("gallon", FLOAT, "gallons")),
    _f("get_current_speed", "Return the car's speed now."),
    _f("get_outside_temperature_from_google", "Return the temperature outside, read from Google."),
    _f("get_outside_temperature_from_weather_com", "Return the temperature outside, read from weather.com."),
    _f("get_zipcode_based_on_city", "Return a city's zip code ('00000' if unknown).", _p("city", STR, "city name")),
    _f("liter_to_gallon", "Convert liters to gallons.", _p("liter", FLOAT, "liters")),
    _f("lockDoors", "Lock or unlock some doors; returns how many stay unlocked.",
       _p("unlock", BOOL, "true unlocks, false locks"),
       _p("door", ARRAY, "doors to change", items={"type": STR, "enum": _DOORS})),
    _f("pressBrakePedal", "Press the brake pedal to a position; starting the engine needs it fully pressed (1).",
       _p("pedalPosition", FLOAT, "0 (up) to 1 (full)")),
    _f("releaseBrakePedal", "Let go of the brake pedal."),
    _f("setCruiseControl", "Turn cruise control on or off; the engine must be running.",
       _p("speed", FLOAT, "mph, a multiple of 5 up to 120"), _p("activate", BOOL, "true to turn on"),
       _p("distanceToNextVehicle", FLOAT, "gap to keep, in meters")),
    _f("setHeadlights", "Switch the headlights.", _p("mode", STR, "light mode", enum=["on", "off", "auto"])),
    _f("set_navigation", "Start route guidance to an address.", _p("destination", STR, "street, city, state")),
    _f("startEngine", "Start the engine, once all doors are locked and the brake pedal is fully pressed.",
       _p("ignitionMode", STR, "START or STOP", enum=["START", "STOP"])),
]

FUNC_DOCS: dict[str, list[dict]] = {
    "GorillaFileSystem": FILE_SYSTEM,
    "MathAPI": MATH,
    "MessageAPI": MESSAGE,
    "TwitterAPI": POSTING,
    "TicketAPI": TICKET,
    "TradingBot": TRADING,
    "TravelAPI": TRAVEL,
    "VehicleControlAPI": VEHICLE,
}


def doc_lines(docs: list[dict]) -> str:
    """A class's docs as JSON Lines, one doc a line."""
    return "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in docs)


def write_func_docs(folder: Path) -> None:
    """Write one JSON Lines file per class into ``folder``, named as BFCL names them."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for cls, docs in FUNC_DOCS.items():
        (folder / FUNC_DOC_FILES[cls]).write_text(doc_lines(docs), encoding="utf-8")


if __name__ == "__main__":
    write_func_docs(OUT)
    print(f"wrote {len(FUNC_DOCS)} files to {OUT}")
