"""TradingBot: a stock-trading account, as in BFCL's multi-turn scenarios.

Behaviour (messages, check order, which malformed inputs raise, the seeded random
transaction timestamps) follows the reference backend as observed by differential tests.
In long-context mode some read methods append BFCL's filler data to what they return;
the state itself is never padded.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from fcenv.backends.long_context import filler, filler_copy
from fcenv.backends.plain_data import plain_copy

_API_DESCRIPTION = (
    "This tool belongs to the trading system, which allows users to trade stocks, manage their "
    "account, and view stock information."
)
# The clock of the scenario world: every "now" of this backend is this instant.
_CURRENT_TIME = datetime(2024, 9, 1, 10, 30)
_TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
_DATE_FORMAT = "%Y-%m-%d"


def _stock(price, percent_change, volume, ma5, ma20) -> dict:
    return {
        "price": price,
        "percent_change": percent_change,
        "volume": volume,
        "MA(5)": ma5,
        "MA(20)": ma20,
    }


_DEFAULT_STATE: dict[str, Any] = {
    "orders": {
        12345: {
            "id": 12345,
            "order_type": "Buy",
            "symbol": "AAPL",
            "price": 210.65,
            "amount": 10,
            "status": "Completed",
        },
        12446: {
            "id": 12446,
            "order_type": "Sell",
            "symbol": "GOOG",
            "price": 2840.56,
            "amount": 5,
            "status": "Pending",
        },
    },
    "account_info": {"account_id": 12345, "balance": 10000.0, "binding_card": 1974202140965533},
    "authenticated": False,
    "market_status": "Closed",
    "order_counter": 12446,
    "stocks": {
        "AAPL": _stock(227.16, 0.17, 2.552, 227.11, 227.09),
        "GOOG": _stock(2840.34, 0.24, 1.123, 2835.67, 2842.15),
        "TSLA": _stock(667.92, -0.12, 1.654, 671.15, 668.2),
        "MSFT": _stock(310.23, 0.09, 3.234, 309.88, 310.11),
        "NVDA": _stock(220.34, 0.34, 1.234, 220.45, 220.67),
        "ALPH": _stock(1320.45, -0.08, 1.567, 1321.12, 1325.78),
        "OMEG": _stock(457.23, 0.12, 2.345, 456.78, 458.12),
        "QUAS": _stock(725.89, -0.03, 1.789, 726.45, 728.0),
        "NEPT": _stock(88.34, 0.19, 0.654, 88.21, 88.67),
        "SYNX": _stock(345.67, 0.11, 2.112, 345.34, 346.12),
        "ZETA": _stock(22.09, -0.05, 0.789, 22.12, 22.34),
    },
    "watch_list": ["NVDA"],
    "transaction_history": [],
    "random_seed": 1053520,
}

# Company name -> symbol, exact names only (found by querying the reference).
_SYMBOL_BY_NAME = {
    "Apple": "AAPL",
    "Google": "GOOG",
    "Tesla": "TSLA",
    "Microsoft": "MSFT",
    "Nvidia": "NVDA",
    "Zeta Corp": "ZETA",
    "Alpha Tech": "ALPH",
    "Omega Industries": "OMEG",
    "Quasar Ltd.": "QUAS",
    "Neptune Systems": "NEPT",
    "Synex Solutions": "SYNX",
    "Amazon": "AMZN",
    "Gorilla": "GORI",
}
# Sector -> symbols, and the long-context filler appended to each.
_SECTORS = {"Technology": ["AAPL", "GOOG", "MSFT", "NVDA"], "Automobile": ["TSLA", "F", "GM"]}
_SECTOR_FILLER = {"Technology": "TECHNOLOGY_EXTENSION", "Automobile": "AUTOMOBILE_EXTENSION"}


def _orders_with_int_ids(orders: dict) -> dict:
    # Scenario JSON can only carry string keys; digit-only keys become the int ids the methods use.
    return {int(k) if isinstance(k, str) and k.isdigit() else k: v for k, v in orders.items()}


class TradingBot:
    def __init__(self) -> None:
        self._api_description = _API_DESCRIPTION

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        defaults = plain_copy(_DEFAULT_STATE)
        self.orders = _orders_with_int_ids(scenario.get("orders", defaults["orders"]))
        self.account_info = scenario.get("account_info", defaults["account_info"])
        self.authenticated = scenario.get("authenticated", defaults["authenticated"])
        self.market_status = scenario.get("market_status", defaults["market_status"])
        self.order_counter = scenario.get("order_counter", defaults["order_counter"])
        self.stocks = scenario.get("stocks", defaults["stocks"])
        self.watch_list = scenario.get("watch_list", defaults["watch_list"])
        self.transaction_history = scenario.get(
            "transaction_history", defaults["transaction_history"]
        )
        self.long_context = long_context
        self._random = random.Random(scenario.get("random_seed", defaults["random_seed"]))

    def _generate_transaction_timestamp(self) -> str:
        moment = _CURRENT_TIME + timedelta(seconds=self._random.randint(0, 86400))
        return moment.strftime(_TIMESTAMP_FORMAT)

    def get_current_time(self) -> dict:
        return {"current_time": _CURRENT_TIME.strftime("%I:%M %p")}

    def get_symbol_by_name(self, name: str) -> dict:
        return {"symbol": _SYMBOL_BY_NAME.get(name, "Stock not found")}

    def get_stock_info(self, symbol: str) -> dict:
        if symbol not in self.stocks:
            return {"error": f"Stock with symbol '{symbol}' not found."}
        if self.long_context:
            info = self.stocks[symbol].copy()
            info["MA(5)"] = filler_copy("MA_5_EXTENSION")
            info["MA(20)"] = filler_copy("MA_20_EXTENSION")
            return info
        return self.stocks[symbol]

    def get_available_stocks(self, sector: str) -> dict:
        stocks = list(_SECTORS.get(sector, []))
        if self.long_context and sector in _SECTOR_FILLER:
            stocks = stocks + filler_copy(_SECTOR_FILLER[sector])
        return {"stock_list": stocks}

    def filter_stocks_by_price(self, stocks: list, min_price: float, max_price: float) -> dict:
        # An unknown symbol counts as priced 0, so it passes when the range includes 0.
        kept = []
        for symbol in stocks:
            price = self.stocks.get(symbol, {}).get("price", 0)
            if price >= min_price and price <= max_price:
                kept.append(symbol)
        return {"filtered_stocks": kept}

    def notify_price_change(self, stocks: list, threshold: float) -> dict:
        changed = [
            symbol
            for symbol in stocks
            if symbol in self.stocks and abs(self.stocks[symbol]["percent_change"]) >= threshold
        ]
        if changed:
            return {"notification": f"Stocks {', '.join(changed)} have significant price changes."}
        return {"notification": "No significant price changes in the selected stocks."}

    def add_to_watchlist(self, stock: str) -> dict:
        if stock not in self.watch_list and stock in self.stocks:
            self.watch_list.append(stock)
        return {"watchlist": self.watch_list}

    def remove_stock_from_watchlist(self, symbol: str) -> dict:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to modify the watchlist."}
        if symbol not in self.watch_list:
            return {"error": f"Stock {symbol} not found in watchlist."}
        self.watch_list.remove(symbol)
        return {"status": f"Stock {symbol} removed from watchlist successfully."}

    def get_watchlist(self) -> Any:
        if not self.authenticated:
            return ["Error: User not authenticated. Please log in to view the watchlist."]
        if self.long_context:
            # The reference returns a bare list here (not a dict), filler included.
            watch = self.watch_list.copy()
            watch.extend(filler_copy("WATCH_LIST_EXTENSION"))
            return watch
        return {"watchlist": self.watch_list}

    def place_order(self, order_type: str, symbol: str, price: float, amount: int) -> dict:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to place an order."}
        if symbol not in self.stocks:
            return {"error": f"Invalid stock symbol: {symbol}"}
        if price <= 0 or amount <= 0:
            return {"error": "Price and amount must be positive values."}
        price = float(price)
        if order_type.lower() == "buy":
            # Whole shares only when checking funds; the order keeps the amount as given.
            required = price * int(amount)
            balance = self.account_info.get("balance", 0)
            if required > balance:
                return {
                    "error": f"Insufficient funds: required ${required:.2f} "
                    f"but only ${balance:.2f} available."
                }
        order_id = self.order_counter
        self.orders[order_id] = {
            "id": order_id,
            "order_type": order_type,
            "symbol": symbol,
            "price": price,
            "amount": amount,
            "status": "Open",
        }
        self.order_counter += 1
        # The caller is told "Pending" although the stored order says "Open" (reference quirk).
        return {
            "order_id": order_id,
            "order_type": order_type,
            "status": "Pending",
            "price": price,
            "amount": amount,
        }

    def get_order_details(self, order_id: int) -> dict:
        if order_id not in self.orders:
            return {
                "error": f"Order with ID {order_id} not found."
                f"Here is the list of orders_id: {list(self.orders.keys())}"
            }
        order = self.orders[order_id]
        if self.long_context:
            details = order.copy()
            symbol = order["symbol"]
            details["metadata"] = {
                key: text.replace("{symbol}", symbol)
                for key, text in filler("ORDER_DETAIL_EXTENSION").items()
            }
            return details
        return order

    def cancel_order(self, order_id: int) -> dict:
        if order_id not in self.orders:
            return {"error": f"Order with ID {order_id} not found."}
        if self.orders[order_id]["status"] == "Completed":
            return {"error": f"Can't cancel order {order_id}. Order is already completed."}
        self.orders[order_id]["status"] = "Cancelled"
        return {"order_id": order_id, "status": "Cancelled"}

    def get_order_history(self) -> Any:
        if not self.authenticated:
            return [{"error": "User not authenticated. Please log in to view order history."}]
        return {"history": list(self.orders.keys())}

    def get_account_info(self) -> dict:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to view account information."}
        return self.account_info

    def fund_account(self, amount: float) -> dict:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to fund the account."}
        if amount <= 0:
            return {"error": "Funding amount must be positive."}
        self.account_info["balance"] += amount
        self.transaction_history.append(
            {
                "type": "deposit",
                "amount": amount,
                "timestamp": self._generate_transaction_timestamp(),
            }
        )
        return {
            "status": "Account funded successfully",
            "new_balance": self.account_info["balance"],
        }

    def withdraw_funds(self, amount: float) -> dict:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to make a transaction."}
        if self.market_status != "Open":
            return {"error": "Market is closed. Transactions are not allowed."}
        if amount <= 0:
            return {"error": "Transaction amount must be positive."}
        if amount > self.account_info["balance"]:
            return {"error": "Insufficient funds for withdrawal."}
        self.account_info["balance"] -= amount
        self.transaction_history.append(
            {
                "type": "withdrawal",
                "amount": amount,
                "timestamp": self._generate_transaction_timestamp(),
            }
        )
        return {"status": "Withdrawal successful", "new_balance": self.account_info["balance"]}

    def get_transaction_history(
        self, start_date: str | None = None, end_date: str | None = None
    ) -> Any:
        if not self.authenticated:
            return [{"error": "User not authenticated. Please log in to view transaction history."}]
        start = datetime.strptime(start_date, _DATE_FORMAT) if start_date else datetime.min
        end = datetime.strptime(end_date, _DATE_FORMAT) if end_date else datetime.max
        history = [
            entry
            for entry in self.transaction_history
            if start <= datetime.strptime(entry["timestamp"], _TIMESTAMP_FORMAT) <= end
        ]
        if self.long_context:
            # The filler's timestamps carry microseconds; it is appended unfiltered.
            history = history + filler_copy("TRANSACTION_HISTORY_EXTENSION")
        return {"transaction_history": history}

    def trading_login(self, username: str, password: str) -> dict:
        if self.authenticated:
            return {"status": "Already logged in"}
        self.authenticated = True
        return {"status": "Logged in successfully"}

    def trading_logout(self) -> dict:
        if not self.authenticated:
            return {"status": "No user is currently logged in"}
        self.authenticated = False
        return {"status": "Logged out successfully"}

    def trading_get_login_status(self) -> dict:
        return {"status": bool(self.authenticated)}
