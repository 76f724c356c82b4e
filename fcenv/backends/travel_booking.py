"""TravelAPI: flights, credit cards and budget, as in BFCL's multi-turn scenarios.

Behaviour (messages, check order, which malformed inputs raise, seeded random ids)
follows the reference backend as observed by differential tests. The airport, route-fare
and exchange-rate tables were read off the reference's answers (``tests/backends/test_lookup_tables_parity.py``
checks them against it).
In long-context mode the scenario's cards and bookings are padded with BFCL's filler.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from fcenv.backends.long_context import filler
from fcenv.backends.plain_data import plain_copy

_API_DESCRIPTION = (
    "This tool belongs to the travel system, which allows users to book flights, manage credit "
    "cards, and view budget information."
)
_DEFAULT_STATE: dict[str, Any] = {
    "random_seed": 141053,
    "credit_card_list": {},
    "booking_record": {},
    "access_token": None,
    "token_type": None,
    "token_expires_in": None,
    "token_scope": None,
    "user_first_name": None,
    "user_last_name": None,
    "budget_limit": None,
}
_CITY_AIRPORTS = {
    "Rivermist": "RMS",
    "Stonebrook": "SBK",
    "Maplecrest": "MPC",
    "Silverpine": "SVP",
    "Shadowridge": "SHD",
    "London": "LHR",
    "Paris": "CDG",
    "Sunset Valley": "SSV",
    "Oakendale": "OKD",
    "Willowbend": "WLB",
    "Crescent Hollow": "CRH",
    "Autumnville": "ATV",
    "Pinehaven": "PHV",
    "Greenfield": "GFD",
    "San Francisco": "SFO",
    "Los Angeles": "LAX",
    "New York": "JFK",
    "Chicago": "ORD",
    "Boston": "BOS",
    "Beijing": "PEK",
    "Hong Kong": "HKG",
    "Rome": "CIA",
    "Tokyo": "HND",
}
# fmt: off
_AIRPORTS = [
    "RMS", "SBK", "MPC", "SVP", "SHD", "CDG", "LHR", "SSV", "OKD", "WLB", "PEK", "HND",
    "HKG", "CIA", "CRH", "ATV", "PHV", "GFD", "SFO", "LAX", "JFK", "ORD", "BOS",
]
# fmt: on
# Fare multiplier per class; compared rather than hashed, as the reference does.
_CLASS_FACTORS = (("economy", 1), ("business", 2), ("first", 5))
# The reference prints a set here, whose order changes with the process's hash seed; we
# print the order it shows under PYTHONHASHSEED=0 so that our text never varies.
_TRAVEL_CLASSES = frozenset({"economy", "business", "first"})
_TRAVEL_CLASSES_TEXT = "{'first', 'business', 'economy'}"
# Units of each currency per US dollar; only conversions to or from USD exist. Ints stay
# ints: the reference's error messages and string arithmetic show which rates are ints.
_USD_RATES = (
    ("RMB", 7),
    ("EUR", 0.8),
    ("JPY", 110),
    ("GBP", 0.7),
    ("CAD", 1.3),
    ("AUD", 1.4),
    ("INR", 70),
    ("RUB", 60),
    ("BRL", 3.8),
    ("MXN", 20),
)
# Longest text that "value * rate" may build (a str or list value is repeated by int rates).
_MAX_REPEAT = 1_000_000
# Economy base fares (USD) of every route, in the reference's own order, which its
# long-context answers expose; read off its get_flight_cost answers. One-way routes.
# fmt: off
_ROUTES: tuple[tuple[str, str, int], ...] = (
    ("SFO", "LAX", 200), ("SFO", "JFK", 500), ("SFO", "ORD", 400), ("SFO", "BOS", 450),
    ("SFO", "RMS", 300), ("SFO", "SBK", 350), ("SFO", "MPC", 370), ("SFO", "SVP", 320),
    ("SFO", "SHD", 330), ("SFO", "SSV", 340), ("SFO", "OKD", 360), ("SFO", "WLB", 310),
    ("SFO", "CRH", 380), ("SFO", "ATV", 390), ("SFO", "PHV", 420), ("SFO", "GFD", 430),
    ("SFO", "CIA", 700),
    ("LAX", "SFO", 100), ("LAX", "JFK", 600), ("LAX", "ORD", 500), ("LAX", "BOS", 550),
    ("LAX", "RMS", 310), ("LAX", "SBK", 320), ("LAX", "MPC", 330), ("LAX", "SVP", 340),
    ("LAX", "SHD", 350), ("LAX", "SSV", 360), ("LAX", "OKD", 370), ("LAX", "WLB", 380),
    ("LAX", "CRH", 390), ("LAX", "ATV", 400), ("LAX", "PHV", 410), ("LAX", "GFD", 420),
    ("LAX", "HND", 430),
    ("JFK", "ORD", 300), ("JFK", "BOS", 250), ("JFK", "RMS", 450), ("JFK", "SBK", 460),
    ("JFK", "MPC", 470), ("JFK", "SVP", 480), ("JFK", "SHD", 490), ("JFK", "SSV", 500),
    ("JFK", "OKD", 510), ("JFK", "WLB", 520), ("JFK", "CRH", 530), ("JFK", "ATV", 540),
    ("JFK", "PHV", 550), ("JFK", "GFD", 560), ("JFK", "LAX", 570), ("JFK", "HND", 800),
    ("JFK", "PVG", 950), ("JFK", "PEK", 1000),
    ("ORD", "LAX", 180), ("ORD", "BOS", 200), ("ORD", "RMS", 350), ("ORD", "SBK", 360),
    ("ORD", "MPC", 370), ("ORD", "SVP", 380), ("ORD", "SHD", 390), ("ORD", "SSV", 400),
    ("ORD", "OKD", 410), ("ORD", "WLB", 420), ("ORD", "CRH", 430), ("ORD", "ATV", 440),
    ("ORD", "PHV", 450), ("ORD", "GFD", 460),
    ("BOS", "RMS", 400), ("BOS", "SBK", 410), ("BOS", "MPC", 420), ("BOS", "SVP", 430),
    ("BOS", "SHD", 440), ("BOS", "SSV", 450), ("BOS", "OKD", 460), ("BOS", "WLB", 470),
    ("BOS", "CRH", 480), ("BOS", "ATV", 490), ("BOS", "PHV", 500), ("BOS", "GFD", 510),
    ("RMS", "BOS", 200), ("RMS", "JFK", 210), ("RMS", "SBK", 220), ("RMS", "MPC", 230),
    ("RMS", "SVP", 240), ("RMS", "SHD", 250), ("RMS", "SSV", 260), ("RMS", "OKD", 270),
    ("RMS", "WLB", 280), ("RMS", "CRH", 290), ("RMS", "ATV", 300), ("RMS", "PHV", 310),
    ("RMS", "GFD", 320), ("RMS", "LAX", 330),
    ("SBK", "MPC", 200), ("SBK", "SVP", 210), ("SBK", "SHD", 220), ("SBK", "SSV", 230),
    ("SBK", "OKD", 240), ("SBK", "WLB", 250), ("SBK", "CRH", 260), ("SBK", "ATV", 270),
    ("SBK", "PHV", 280), ("SBK", "GFD", 290),
    ("MPC", "SVP", 210), ("MPC", "SHD", 220), ("MPC", "SSV", 230), ("MPC", "OKD", 240),
    ("MPC", "WLB", 250), ("MPC", "CRH", 260), ("MPC", "ATV", 270), ("MPC", "PHV", 280),
    ("MPC", "GFD", 290),
    ("SVP", "SHD", 230), ("SVP", "SSV", 240), ("SVP", "OKD", 250), ("SVP", "WLB", 260),
    ("SVP", "CRH", 270), ("SVP", "ATV", 280), ("SVP", "PHV", 290), ("SVP", "GFD", 300),
    ("SHD", "SSV", 220), ("SHD", "OKD", 230), ("SHD", "WLB", 240), ("SHD", "CRH", 250),
    ("SHD", "ATV", 260), ("SHD", "PHV", 270), ("SHD", "GFD", 280),
    ("SSV", "OKD", 240), ("SSV", "WLB", 250), ("SSV", "CRH", 260), ("SSV", "ATV", 270),
    ("SSV", "PHV", 280), ("SSV", "GFD", 290),
    ("OKD", "WLB", 230), ("OKD", "CRH", 240), ("OKD", "ATV", 250), ("OKD", "PHV", 260),
    ("OKD", "GFD", 270),
    ("WLB", "CRH", 250), ("WLB", "ATV", 260), ("WLB", "PHV", 270), ("WLB", "GFD", 280),
    ("CRH", "ATV", 240), ("CRH", "PHV", 250), ("CRH", "GFD", 260), ("CRH", "SFO", 270),
    ("CRH", "RMS", 280), ("CRH", "HKG", 290), ("CRH", "JFK", 300),
    ("ATV", "PHV", 230), ("ATV", "GFD", 240),
    ("PHV", "GFD", 220),
    ("LHR", "CDG", 100),
    ("OKD", "LAX", 220),
)
# fmt: on
_ROUTE_FARES = {(origin, destination): fare for origin, destination, fare in _ROUTES}
_SUPPORT_REPLY = (
    "Thank you for contacting customer support. Your message has been received and we will get "
    "back to you shortly."
)


def _times(value: Any, rate: Any) -> Any:
    """``value * rate``, refusing to build a repeated sequence beyond ``_MAX_REPEAT`` items."""
    if (
        isinstance(value, (str, bytes, list, tuple))
        and isinstance(rate, int)
        and len(value) * rate > _MAX_REPEAT
    ):
        raise ValueError("value too large to convert")
    return value * rate


def _fare_multiplier(travel_class: str, travel_date: str) -> float:
    """Class factor, doubled when the date's digits add up to an even number (0 included)."""
    factor = next((f for name, f in _CLASS_FACTORS if travel_class == name), None)
    if factor is None:
        raise ValueError("Invalid travel class. Options are: economy, business, first.")
    if sum(int(char) for char in travel_date if char.isdigit()) % 2 == 0:
        factor *= 2
    return float(factor)


class TravelAPI:
    def __init__(self) -> None:
        self._api_description = _API_DESCRIPTION

    def __eq__(self, value: object) -> bool:
        if not isinstance(value, TravelAPI):
            return False
        return all(
            getattr(value, name) == mine
            for name, mine in vars(self).items()
            if not name.startswith("_")
        )

    __hash__ = None  # type: ignore[assignment]

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        defaults = plain_copy(_DEFAULT_STATE)
        self._random = random.Random(scenario.get("random_seed", defaults["random_seed"]))
        self.credit_card_list = scenario.get("credit_card_list", defaults["credit_card_list"])
        self.booking_record = scenario.get("booking_record", defaults["booking_record"])
        self.access_token = scenario.get("access_token", defaults["access_token"])
        self.token_type = scenario.get("token_type", defaults["token_type"])
        self.token_expires_in = scenario.get("token_expires_in", defaults["token_expires_in"])
        self.token_scope = scenario.get("token_scope", defaults["token_scope"])
        self.user_first_name = scenario.get("user_first_name", defaults["user_first_name"])
        self.user_last_name = scenario.get("user_last_name", defaults["user_last_name"])
        self.budget_limit = scenario.get("budget_limit", defaults["budget_limit"])
        self.long_context = long_context
        self._filler_card_ids: list[str] = []
        if long_context:
            self._add_credit_cards()
            self._add_booking_records()

    def _add_credit_cards(self) -> None:
        # Scenario entries win over filler entries with the same id.
        for card_id, card in filler("CREDIT_CARD_EXTENSION").items():
            if card_id not in self.credit_card_list:
                self.credit_card_list[card_id] = plain_copy(card)
                self._filler_card_ids.append(card_id)

    def _add_booking_records(self) -> None:
        for booking_id, booking in filler("BOOKING_RECORD_EXTENSION").items():
            self.booking_record.setdefault(booking_id, plain_copy(booking))

    def _flight_cost(
        self, travel_from: str, travel_to: str, travel_date: str, travel_class: str
    ) -> float:
        fare = _ROUTE_FARES.get((travel_from, travel_to))
        if fare is None:
            raise ValueError("No available route for the given airports.")
        return fare * _fare_multiplier(travel_class, travel_date)

    def authenticate_travel(
        self,
        client_id: str,
        client_secret: str,
        refresh_token: str,
        grant_type: str,
        user_first_name: str,
        user_last_name: str,
    ) -> dict:
        self.token_expires_in = 2
        self.access_token = str(self._random.randint(100000, 999999))
        self.token_type = "Bearer"
        self.token_scope = grant_type
        self.user_first_name = user_first_name
        self.user_last_name = user_last_name
        return {
            "expires_in": 2,
            "access_token": self.access_token,
            "token_type": self.token_type,
            "scope": self.token_scope,
        }

    def travel_get_login_status(self) -> dict:
        # Logged in means a token was issued and has not expired (expiry is the value 0).
        return {"status": self.token_expires_in is not None and self.token_expires_in != 0}

    def get_budget_fiscal_year(
        self, lastModifiedAfter: str | None = None, includeRemoved: str | None = None
    ) -> dict:
        return {"budget_fiscal_year": "2018"}

    def register_credit_card(
        self,
        access_token: str,
        card_number: str,
        expiration_date: str,
        cardholder_name: str,
        card_verification_number: int,
    ) -> dict:
        if self.token_expires_in is None:
            return {"error": "Token not initialized"}
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        # The reference looks the number up among the card ids, so only an id-like number clashes.
        if card_number in self.credit_card_list:
            return {"error": "Card already registered"}
        card_id = str(self._random.randint(100000000000, 999999999999))
        self.credit_card_list[card_id] = {
            "card_number": card_number,
            "expiration_date": expiration_date,
            "cardholder_name": cardholder_name,
            "card_verification_number": card_verification_number,
            "balance": self._random.randint(10000, 99999),
        }
        return {"card_id": card_id}

    def get_flight_cost(
        self, travel_from: str, travel_to: str, travel_date: str, travel_class: str
    ) -> dict:
        cost = self._flight_cost(travel_from, travel_to, travel_date, travel_class)
        if self.long_context:
            # The reference then lists the fare of every route it knows, in its table order.
            multiplier = _fare_multiplier(travel_class, travel_date)
            return {"travel_cost_list": [fare * multiplier for _, _, fare in _ROUTES]}
        return {"travel_cost_list": [cost]}

    def get_credit_card_balance(self, access_token: str, card_id: str) -> dict:
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        if card_id not in self.credit_card_list:
            return {
                "error": "Card not registered. Here are a list of card_id's: "
                f"{list(self.credit_card_list.keys())}"
            }
        return {"card_balance": self.credit_card_list[card_id]["balance"]}

    def book_flight(
        self,
        access_token: str,
        card_id: str,
        travel_date: str,
        travel_from: str,
        travel_to: str,
        travel_class: str,
    ) -> dict:
        if self.token_expires_in == 0:
            return {"booking_status": False, "error": "Token expired"}
        if access_token != self.access_token:
            return {"booking_status": False, "error": "Invalid access token"}
        if card_id not in self.credit_card_list:
            return {"booking_status": False, "error": "Card not registered"}
        card = self.credit_card_list[card_id]
        if "balance" not in card:
            return {"booking_status": False, "error": "Balance not found"}
        if travel_from not in _AIRPORTS:
            return {
                "booking_status": False,
                "error": f"Invalid departure airport code: {travel_from}",
            }
        if travel_to not in _AIRPORTS:
            return {
                "booking_status": False,
                "error": f"Invalid destination airport code: {travel_to}",
            }
        try:
            datetime.strptime(travel_date, "%Y-%m-%d")
        except ValueError:
            return {"booking_status": False, "error": "Invalid date format. Use YYYY-MM-DD."}
        if travel_class not in _TRAVEL_CLASSES:
            return {
                "booking_status": False,
                "error": f"Invalid travel class. Must be one of {_TRAVEL_CLASSES_TEXT}",
            }
        try:
            cost = self._flight_cost(travel_from, travel_to, travel_date, travel_class)
        except ValueError as exc:
            return {"booking_status": False, "error": str(exc)}
        if card["balance"] < cost:
            return {"booking_status": False, "error": "Insufficient funds"}
        if self.budget_limit is not None and card["balance"] < self.budget_limit:
            return {"booking_status": False, "error": "Balance is less than budget limit"}
        card["balance"] -= cost
        booking_id = str(self._random.randint(1000000, 9999999))
        transaction_id = str(self._random.randint(10000000, 99999999))
        self.booking_record[booking_id] = {
            "card_id": card_id,
            "travel_date": travel_date,
            "travel_from": travel_from,
            "travel_to": travel_to,
            "travel_class": travel_class,
            "travel_cost": cost,
            "transaction_id": transaction_id,
        }
        return {
            "booking_id": booking_id,
            "transaction_id": transaction_id,
            "booking_status": True,
            # The reference shows the whole history only in long-context mode.
            "booking_history": self.booking_record if self.long_context else {},
        }

    def get_booking_history(self, access_token: str) -> dict:
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        return {"booking_history": self.booking_record}

    def retrieve_invoice(
        self,
        access_token: str,
        booking_id: str | None = None,
        insurance_id: str | None = None,
    ) -> dict:
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        booking = self.booking_record[booking_id]
        return {
            "invoice": {
                "booking_id": booking_id,
                "travel_date": booking["travel_date"],
                "travel_from": booking["travel_from"],
                "travel_to": booking["travel_to"],
                "travel_class": booking["travel_class"],
                "travel_cost": booking["travel_cost"],
                "transaction_id": booking["transaction_id"],
            }
        }

    def list_all_airports(self) -> list:
        return list(_AIRPORTS)

    def cancel_booking(self, access_token: str, booking_id: str) -> dict:
        if self.token_expires_in == 0:
            return {"cancel_status": False, "error": "Token expired"}
        if access_token != self.access_token:
            return {"cancel_status": False, "error": "Invalid access token"}
        if booking_id not in self.booking_record:
            return {"cancel_status": False, "error": "Booking not found"}
        booking = self.booking_record[booking_id]
        self.credit_card_list[booking["card_id"]]["balance"] += booking["travel_cost"]
        del self.booking_record[booking_id]
        return {"cancel_status": True}

    def compute_exchange_rate(self, base_currency: str, target_currency: str, value: float) -> dict:
        # Currencies are compared, not hashed: odd arguments just find no rate.
        for currency, rate in _USD_RATES:
            if base_currency == "USD" and target_currency == currency:
                return {"exchanged_value": float(_times(value, rate))}
            if base_currency == currency and target_currency == "USD":
                return {"exchanged_value": round(value / rate, 2)}
        raise ValueError("No available exchange rate for the given currencies.")

    def verify_traveler_information(
        self, first_name: str, last_name: str, date_of_birth: str, passport_number: str
    ) -> dict:
        if first_name != self.user_first_name or last_name != self.user_last_name:
            expected = f"{self.user_first_name} {self.user_last_name}"
            return {
                "verification_status": False,
                "verification_failure": (
                    "Cannot book flight information for another user."
                    f"Expected {expected}, got {first_name} {last_name}"
                ),
            }
        try:
            born = datetime.strptime(date_of_birth, "%Y-%m-%d")
        except ValueError:
            return {
                "verification_status": False,
                "verification_failure": "Invalid date of birth format. Please use YYYY-MM-DD.",
            }
        today = datetime.now()
        age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
        if age < 18:
            return {
                "verification_status": False,
                "verification_failure": "Traveler must be at least 18 years old.",
            }
        if not passport_number.startswith("US"):
            return {
                "verification_status": False,
                "verification_failure": "Passport must be issued by the United States.",
            }
        return {"verification_status": True}

    def set_budget_limit(self, access_token: str, budget_limit: float) -> dict:
        if self.token_expires_in == 0:
            return {"error": "Token expired"}
        if access_token != self.access_token:
            return {"error": "Invalid access token"}
        self.budget_limit = float(budget_limit)
        return {"budget_limit": self.budget_limit}

    def get_nearest_airport_by_city(self, location: str) -> dict:
        return {"nearest_airport": _CITY_AIRPORTS.get(location, "Unknown")}

    def purchase_insurance(
        self,
        access_token: str,
        insurance_type: str,
        booking_id: str,
        insurance_cost: float,
        card_id: str,
    ) -> dict:
        if self.token_expires_in == 0:
            return {"insurance_status": False, "error": "Token expired"}
        if access_token != self.access_token:
            return {"insurance_status": False, "error": "Invalid access token"}
        if self.budget_limit is not None and self.budget_limit < insurance_cost:
            return {"insurance_status": False, "error": "Exceeded budget limit"}
        if booking_id not in self.booking_record:
            return {"insurance_status": False, "error": "Booking not found"}
        if card_id not in self.credit_card_list:
            return {"insurance_status": False, "error": "Credit card not registered"}
        self.credit_card_list[card_id]["balance"] -= insurance_cost
        return {
            "insurance_id": str(self._random.randint(100000000, 999999999)),
            "insurance_status": True,
        }

    def contact_customer_support(self, booking_id: str, message: str) -> dict:
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        return {"customer_support_message": _SUPPORT_REPLY}

    def get_all_credit_cards(self) -> dict:
        return {"credit_card_list": self.credit_card_list}


def share_long_context_cards(*instances: TravelAPI) -> None:
    """Make long-context instances hold one dict per filler credit card, as BFCL's do.

    BFCL pads every long-context TravelAPI with the same card dicts (its module constants),
    so the model's and the ground truth's instances of an episode see each other's spending
    on those cards, and BFCL's state check cannot tell them apart. Ours copy the filler per
    instance; a checker that wants BFCL's exact verdicts calls this on the two instances of
    an episode right after loading them.
    """
    if not instances:
        return
    first = instances[0]
    shared = set(first._filler_card_ids)
    for other in instances[1:]:
        shared &= set(other._filler_card_ids)
    for other in instances[1:]:
        for card_id in shared:
            other.credit_card_list[card_id] = first.credit_card_list[card_id]
