"""Behaviour of the group-b backends that users rely on, without the oracle."""

from __future__ import annotations

import copy
import inspect

import pytest

from fcenv.backends import backend_class
from fcenv.backends.long_context import filler
from fcenv.backends.travel_booking import share_long_context_cards
from tests.support.tickets_trading_travel_vehicle_calls import GROUP_B, load_docs


def _loaded(name: str, scenario: dict | None = None, long_context: bool = False):
    instance = backend_class(name)()
    instance._load_scenario(copy.deepcopy(scenario or {}), long_context=long_context)
    return instance


@pytest.mark.parametrize("name", GROUP_B)
def test_public_methods_are_exactly_the_documented_functions(bfcl_dir, name):
    documented = {doc["name"] for doc in load_docs(bfcl_dir, name)}
    public = {
        n
        for n, _ in inspect.getmembers(backend_class(name), inspect.isfunction)
        if not n.startswith("_")
    }
    assert public == documented
    for doc in load_docs(bfcl_dir, name):
        params = list(inspect.signature(getattr(backend_class(name), doc["name"])).parameters)[1:]
        assert set(params) == set(doc["parameters"]["properties"]), doc["name"]


def test_ticket_flow_login_create_edit_resolve():
    api = _loaded("TicketAPI", {"ticket_queue": [], "ticket_counter": 7})
    assert api.create_ticket("x") == {
        "error": "User not authenticated. Please log in to create a ticket."
    }
    assert api.ticket_login("ann", "pw") == {"success": True}
    ticket = api.create_ticket("Printer", "jams", 4)
    assert ticket["id"] == 7 and ticket["created_by"] == "ann" and api.ticket_counter == 8
    assert api.create_ticket("bad", priority=6) == {
        "error": "Invalid priority. Priority must be between 1 and 5."
    }
    # None values are skipped; unknown fields are refused as a whole.
    assert api.edit_ticket(7, {"title": "Printer 2", "description": None})["status"].endswith(
        "updated successfully."
    )
    assert api.get_ticket(7)["title"] == "Printer 2" and api.get_ticket(7)["description"] == "jams"
    assert api.edit_ticket(7, {"owner": "bob"}) == {"error": "Invalid fields for update: owner"}
    assert api.get_user_tickets("OPEN") == [api.get_ticket(7)]
    assert api.resolve_ticket(7, "cleaned")["status"] == "Ticket 7 has been resolved successfully."
    assert api.get_ticket(7)["resolution"] == "cleaned"
    assert api.logout() == {"success": True} and api.logout() == {"success": False}


def test_trading_order_is_reported_pending_but_stored_open():
    bot = _loaded("TradingBot", {"authenticated": True})
    reply = bot.place_order("Buy", "AAPL", 200, 3)
    assert reply == {
        "order_id": 12446,
        "order_type": "Buy",
        "status": "Pending",
        "price": 200.0,
        "amount": 3,
    }
    assert bot.orders[12446]["status"] == "Open" and bot.order_counter == 12447
    assert bot.place_order("Buy", "AAPL", 1000, 11)["error"].startswith(
        "Insufficient funds: required $11000.00"
    )
    assert bot.cancel_order(12446) == {"order_id": 12446, "status": "Cancelled"}
    assert bot.cancel_order(12345) == {
        "error": "Can't cancel order 12345. Order is already completed."
    }


def test_trading_timestamps_follow_the_scenario_seed():
    first = _loaded("TradingBot", {"authenticated": True, "random_seed": 7})
    second = _loaded("TradingBot", {"authenticated": True, "random_seed": 7})
    for bot in (first, second):
        bot.fund_account(10)
        bot.fund_account(20)
    assert first.transaction_history == second.transaction_history
    assert all(
        entry["timestamp"].startswith(("2024-09-01", "2024-09-02"))
        for entry in first.transaction_history
    )


def test_trading_long_context_pads_answers_not_state():
    bot = _loaded("TradingBot", {"authenticated": True, "watch_list": ["AAPL"]}, long_context=True)
    watch = bot.get_watchlist()
    assert isinstance(watch, list) and watch[0] == "AAPL" and watch[-1] is Ellipsis
    assert len(watch) == 1 + len(filler("WATCH_LIST_EXTENSION"))
    assert bot.watch_list == ["AAPL"]
    assert bot.get_stock_info("AAPL")["MA(5)"] == filler("MA_5_EXTENSION")
    assert bot.stocks["AAPL"]["MA(5)"] == 227.11
    assert (
        "AAPL is one of the most influential"
        in bot.get_order_details(12345)["metadata"]["company_overview"]
    )
    assert "metadata" not in bot.orders[12345]


def test_travel_booking_charges_fare_and_cancel_refunds():
    scenario = {
        "access_token": "tok",
        "token_expires_in": 3600,
        "credit_card_list": {"c1": {"card_number": "4111", "balance": 1000.0}},
        "budget_limit": 100.0,
    }
    api = _loaded("TravelAPI", scenario)
    # 2026-11-15 has an even digit sum, so the 200 USD SFO->LAX fare doubles.
    assert api.get_flight_cost("SFO", "LAX", "2026-11-15", "economy") == {
        "travel_cost_list": [400.0]
    }
    assert api.get_flight_cost("SFO", "LAX", "2026-11-16", "first") == {
        "travel_cost_list": [1000.0]
    }
    booking = api.book_flight("tok", "c1", "2026-11-15", "SFO", "LAX", "economy")
    assert booking["booking_status"] is True and api.credit_card_list["c1"]["balance"] == 600.0
    assert api.retrieve_invoice("tok", booking["booking_id"])["invoice"]["travel_cost"] == 400.0
    assert api.cancel_booking("tok", booking["booking_id"]) == {"cancel_status": True}
    assert api.credit_card_list["c1"]["balance"] == 1000.0 and api.booking_record == {}
    assert (
        api.book_flight("bad", "c1", "2026-11-15", "SFO", "LAX", "economy")["error"]
        == "Invalid access token"
    )


def test_travel_ids_are_deterministic_per_seed():
    def ids(api):
        token = api.authenticate_travel("id", "secret", "refresh", "read_write", "Ann", "Lee")[
            "access_token"
        ]
        return token, api.register_credit_card(token, "4111", "12/30", "Ann Lee", 123)["card_id"]

    assert ids(_loaded("TravelAPI")) == ids(_loaded("TravelAPI"))
    assert ids(_loaded("TravelAPI", {"random_seed": 1})) != ids(_loaded("TravelAPI"))


def test_travel_long_context_filler_is_copied_per_instance():
    card_id, card = next(iter(filler("CREDIT_CARD_EXTENSION").items()))
    before = copy.deepcopy(card)
    api = _loaded("TravelAPI", {"access_token": "tok", "token_expires_in": 5}, long_context=True)
    api.credit_card_list[card_id]["balance"] -= 123
    assert filler("CREDIT_CARD_EXTENSION")[card_id] == before
    assert _loaded("TravelAPI", {}, long_context=True).credit_card_list[card_id] == before


def test_shared_long_context_cards_reproduce_bfcl_state_check():
    scenario = {
        "access_token": "tok",
        "token_expires_in": 5,
        "credit_card_list": {"own": {"balance": 9.0}},
    }
    model, truth = _loaded("TravelAPI", scenario, True), _loaded("TravelAPI", scenario, True)
    share_long_context_cards(model, truth)
    card_id = next(iter(filler("CREDIT_CARD_EXTENSION")))
    assert model.book_flight("tok", card_id, "2026-11-15", "SFO", "LAX", "economy")[
        "booking_status"
    ]
    assert model.credit_card_list[card_id] is truth.credit_card_list[card_id]
    assert model.credit_card_list["own"] is not truth.credit_card_list["own"]
    assert card_id in _loaded("TravelAPI", {}, True).credit_card_list  # others keep fresh copies
    assert (
        _loaded("TravelAPI", {}, True).credit_card_list[card_id]
        == filler("CREDIT_CARD_EXTENSION")[card_id]
    )


def test_exchange_rates_convert_to_and_from_usd_only():
    api = _loaded("TravelAPI")
    assert api.compute_exchange_rate("USD", "EUR", 100) == {"exchanged_value": 80.0}
    assert api.compute_exchange_rate("RMB", "USD", 100) == {"exchanged_value": 14.29}
    with pytest.raises(ValueError, match="No available exchange rate"):
        api.compute_exchange_rate("EUR", "GBP", 1)


def test_vehicle_start_needs_locked_doors_and_full_brake():
    car = _loaded("VehicleControlAPI", {"fuelLevel": 10.0})
    assert car.remainingUnlockedDoors == 4
    assert car.startEngine("START")["error"].endswith(
        "unlocked doors: driver, passenger, rear_left, rear_right"
    )
    assert (
        car.lockDoors(False, ["driver", "passenger", "rear_left", "rear_right"])[
            "remainingUnlockedDoors"
        ]
        == 0
    )
    assert car.pressBrakePedal(0.5)["brakePedalForce"] == 500.0
    assert car.startEngine("START") == {
        "error": "Must press the brake fully before starting the engine."
    }
    car.pressBrakePedal(1)
    assert car.startEngine("START") == {
        "engineState": "running",
        "fuelLevel": 10.0,
        "batteryVoltage": 12.6,
    }
    assert car.setCruiseControl(65, True, 40)["cruiseStatus"] == "active"
    assert (
        car.startEngine("STOP") == {"error": "Invalid ignition mode."}
        and car.engine_state == "stopped"
    )


def test_vehicle_equality_compares_public_state_only():
    first, second = _loaded("VehicleControlAPI"), _loaded("VehicleControlAPI")
    second.get_current_speed()  # moves the private random generator only
    assert first == second
    second.fillFuelTank(5)
    assert first != second and first != object()


def test_vehicle_long_context_adds_filler_to_answers():
    car = _loaded("VehicleControlAPI", long_context=True)
    assert car.displayCarStatus("fuel") == {
        "metadata": filler("CAR_STATUS_METADATA_EXTENSION"),
        "fuelLevel": 0.0,
    }
    assert car.estimate_distance("83214", "94016")["intermediaryCities"] == filler(
        "INTERMEDIARY_CITIES"
    )
    assert car.estimate_distance("83214", "94016")["distance"] == 980.0


def test_hostile_arguments_stay_cheap():
    huge = "9" * 2_000_000
    travel = _loaded("TravelAPI")
    with pytest.raises(ValueError, match="too large"):
        travel.compute_exchange_rate(
            "USD", "JPY", huge
        )  # the reference would build a 220 MB string
    with pytest.raises(ValueError, match="too large"):
        travel.compute_exchange_rate("USD", "RMB", [0] * 1_000_000)
    assert travel.get_flight_cost("SFO", "LAX", huge, "economy") == {"travel_cost_list": [400.0]}
    assert travel.get_nearest_airport_by_city(huge) == {"nearest_airport": "Unknown"}
    bot = _loaded("TradingBot", {"authenticated": True})
    assert bot.notify_price_change(["ZZZ"] * 1_000_000, 0.1)["notification"].startswith(
        "No significant"
    )
    assert (
        len(bot.filter_stocks_by_price(["AAPL"] * 1_000_000, 0, 1000)["filtered_stocks"])
        == 1_000_000
    )
    assert "Insufficient funds" in bot.place_order("Buy", "AAPL", 1.0, 10**6)["error"]
    car = _loaded("VehicleControlAPI")
    assert car.lockDoors(True, ["driver"] * 1_000_000)["remainingUnlockedDoors"] == 4
    assert car.set_navigation(huge)["status"].endswith("9")
    tickets = _loaded("TicketAPI", {"current_user": "ann"})
    assert tickets.create_ticket(huge, huge, 1)["id"] == 1
    assert tickets.get_user_tickets(huge) == []
