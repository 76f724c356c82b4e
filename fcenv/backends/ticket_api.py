"""TicketAPI: a support-ticket queue, as in BFCL's multi-turn scenarios.

Behaviour (messages, check order, which malformed inputs raise) follows the reference
backend as observed by differential tests; tickets are plain dicts because the scenarios
hand them in that shape and BFCL compares ``ticket_queue`` with ``==``.
"""

from __future__ import annotations

from typing import Any

from fcenv.backends.plain_data import plain_copy

_API_DESCRIPTION = (
    "This tool belongs to the ticketing system that is part of a company, which allows users to "
    "create, view, and manage support business tickets."
)
_EDITABLE_FIELDS = frozenset({"title", "description", "status", "priority"})
_DEFAULT_STATE: dict[str, Any] = {"ticket_queue": [], "ticket_counter": 1, "current_user": None}


class TicketAPI:
    def __init__(self) -> None:
        self._api_description = _API_DESCRIPTION

    def _load_scenario(self, scenario: dict, long_context: bool = False) -> None:
        defaults = plain_copy(_DEFAULT_STATE)
        self.ticket_queue = scenario.get("ticket_queue", defaults["ticket_queue"])
        self.ticket_counter = scenario.get("ticket_counter", defaults["ticket_counter"])
        self.current_user = scenario.get("current_user", defaults["current_user"])

    def _find_ticket(self, ticket_id: int) -> dict | None:
        # Scenario tickets may lack "id"; the lookup then fails with KeyError, like the reference.
        for ticket in self.ticket_queue:
            if ticket["id"] == ticket_id:
                return ticket
        return None

    def create_ticket(self, title: str, description: str = "", priority: int = 1) -> dict:
        if not self.current_user:
            return {"error": "User not authenticated. Please log in to create a ticket."}
        if priority < 1 or priority > 5:
            return {"error": "Invalid priority. Priority must be between 1 and 5."}
        ticket = {
            "id": self.ticket_counter,
            "title": title,
            "description": description,
            "status": "Open",
            "priority": priority,
            "created_by": self.current_user,
        }
        self.ticket_queue.append(ticket)
        self.ticket_counter += 1
        return ticket

    def get_ticket(self, ticket_id: int) -> dict:
        ticket = self._find_ticket(ticket_id)
        if not ticket:
            return {"error": f"Ticket with ID {ticket_id} not found."}
        return ticket

    def close_ticket(self, ticket_id: int) -> dict:
        ticket = self._find_ticket(ticket_id)
        if not ticket:
            return {"error": f"Ticket with ID {ticket_id} not found."}
        if ticket["status"] == "Closed":
            return {"error": f"Ticket with ID {ticket_id} is already closed."}
        ticket["status"] = "Closed"
        return {"status": f"Ticket {ticket_id} has been closed successfully."}

    def resolve_ticket(self, ticket_id: int, resolution: str) -> dict:
        ticket = self._find_ticket(ticket_id)
        if not ticket:
            return {"error": f"Ticket with ID {ticket_id} not found."}
        if ticket["status"] == "Resolved":
            return {"error": f"Ticket with ID {ticket_id} is already resolved."}
        ticket["status"] = "Resolved"
        ticket["resolution"] = resolution
        return {"status": f"Ticket {ticket_id} has been resolved successfully."}

    def edit_ticket(self, ticket_id: int, updates: dict) -> dict:
        ticket = self._find_ticket(ticket_id)
        if not ticket:
            return {"error": f"Ticket with ID {ticket_id} not found."}
        # The reference joins a set, whose order changes with the process's hash seed; the
        # model's own key order keeps our text the same in every run (and equal to the
        # reference's whenever one field is bad).
        invalid = [key for key in updates.keys() if key not in _EDITABLE_FIELDS]
        if invalid:
            return {"error": f"Invalid fields for update: {', '.join(invalid)}"}
        for key, value in updates.items():
            if value is not None:
                ticket[key] = value
        return {"status": f"Ticket {ticket_id} has been updated successfully."}

    def get_user_tickets(self, status: str | None = None) -> list:
        if not self.current_user:
            return [{"error": "User not authenticated. Please log in to view tickets."}]
        return [
            ticket
            for ticket in self.ticket_queue
            if ticket["created_by"] == self.current_user
            and (not status or ticket["status"].lower() == status.lower())
        ]

    def ticket_login(self, username: str, password: str) -> dict:
        if username and password:
            self.current_user = username
            return {"success": True}
        return {"success": False}

    def ticket_get_login_status(self) -> dict:
        return {"login_status": bool(self.current_user)}

    def logout(self) -> dict:
        if not self.current_user:
            return {"success": False}
        self.current_user = None
        return {"success": True}
