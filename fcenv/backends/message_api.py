"""MessageAPI: a tiny workspace messenger (users, an outbox of sent messages, a login).

Behaviour mirrors BFCL's class of the same name, learned by running it: the inbox is a list
of one-entry dicts ``{receiver_id: message}`` and only the first key of each entry counts;
ids of sent messages come from a private ``random.Random`` seeded per scenario.
"""

from __future__ import annotations

import random
from typing import Any

from fcenv.backends.plain_data import plain_copy

_DEFAULT_SEED = 200191
_DEFAULT_STATE: dict[str, Any] = {
    "generated_ids": set(),
    "user_count": 4,
    "user_map": {"Alice": "USR001", "Bob": "USR002", "Catherine": "USR003", "Daniel": "USR004"},
    "inbox": [
        {"USR002": "My name is Alice. I want to connect."},
        {"USR003": "Could you upload the file?"},
        {"USR004": "Could you upload the file?"},
    ],
    "message_count": 3,
    "current_user": None,
}
_NOT_LOGGED_IN = {"error": "No user is currently logged in."}


def _first_item(entry: dict) -> tuple[Any, Any]:
    # Entries are meant to hold one receiver; extra keys are ignored, an empty one is an error.
    receiver = list(entry.keys())[0]  # noqa: RUF015 - an empty entry must fail with IndexError
    return receiver, entry[receiver]


class MessageAPI:
    def __init__(self):
        self._api_description = "This tool belongs to the Message API, which is used to manage user interactions in a workspace."

    def __eq__(self, value: object) -> bool:
        if not isinstance(value, MessageAPI):
            return False
        return all(getattr(self, key, None) == getattr(value, key, None) for key in _DEFAULT_STATE)

    def _load_scenario(self, scenario: dict, long_context=False) -> None:
        defaults = plain_copy(_DEFAULT_STATE)
        self._random = random.Random(scenario.get("random_seed", _DEFAULT_SEED))
        for key, default in defaults.items():
            setattr(self, key, scenario.get(key, default))

    def _generate_id(self):
        new_id = self._random.randint(10000, 99999)
        while new_id in self.generated_ids:
            new_id = self._random.randint(10000, 99999)
        self.generated_ids.add(new_id)
        return {"new_id": new_id}

    def list_users(self) -> dict[str, list[str]]:
        return {"user_list": list(self.user_map.keys())}

    def get_user_id(self, user: str) -> dict[str, str | None]:
        if user not in self.user_map:
            return {"error": f"User '{user}' not found in the workspace."}
        return {"user_id": self.user_map[user]}

    def message_login(self, user_id: str) -> dict[str, str | bool]:
        if user_id not in self.user_map.values():
            return {"login_status": False, "message": f"User ID '{user_id}' not found."}
        self.current_user = user_id
        return {"login_status": True, "message": f"User '{user_id}' logged in successfully."}

    def message_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.current_user)}

    def send_message(self, receiver_id: str, message: str) -> dict[str, str | bool]:
        if not self.current_user:
            return dict(_NOT_LOGGED_IN)
        if receiver_id not in self.user_map.values():
            return {"error": f"Receiver ID '{receiver_id}' not found."}
        message_id = self._generate_id()
        self.inbox.append({receiver_id: message})
        self.message_count += 1
        return {
            "sent_status": True,
            "message_id": message_id,
            "message": f"Message sent to '{receiver_id}' successfully.",
        }

    def delete_message(self, receiver_id: str) -> dict[str, str | bool]:
        if not self.current_user:
            return dict(_NOT_LOGGED_IN)
        for index in range(len(self.inbox) - 1, -1, -1):
            receiver, _ = _first_item(self.inbox[index])
            if receiver == receiver_id:
                del self.inbox[index]
                return {
                    "deleted_status": True,
                    "receiver_id": receiver_id,
                    "message": f"Receiver {receiver_id}'s latest message deleted successfully.",
                }
        return {"error": f"Receiver ID {receiver_id} not found."}

    def view_messages_sent(self) -> dict[str, dict[str, list[str]] | str]:
        if not self.current_user:
            return dict(_NOT_LOGGED_IN)
        grouped: dict[Any, list] = {}
        for entry in self.inbox:
            receiver, message = _first_item(entry)
            grouped.setdefault(receiver, []).append(message)
        return {"messages": grouped}

    def add_contact(self, user_name: str) -> dict[str, str | bool]:
        if user_name in self.user_map:
            return {"error": f"User name '{user_name}' already exists."}
        self.user_count += 1
        user_id = f"USR{str(self.user_count).zfill(3)}"
        if user_id in self.user_map.values():
            return {"error": f"User ID '{user_id}' already exists."}
        self.user_map[user_name] = user_id
        return {
            "added_status": True,
            "user_id": user_id,
            "message": f"Contact '{user_name}' added successfully.",
        }

    def search_messages(self, keyword: str) -> dict[str, list[dict[str, str | list[str]]] | str]:
        if not self.current_user:
            return dict(_NOT_LOGGED_IN)
        needle = keyword.lower()
        results = []
        for entry in self.inbox:
            receiver, message = _first_item(entry)
            if needle in message.lower():
                results.append({"receiver_id": receiver, "message": message})
        return {"results": results}

    def get_message_stats(self) -> dict[str, dict[str, int] | str]:
        if not self.current_user:
            return dict(_NOT_LOGGED_IN)
        contacts = set()
        for entry in self.inbox:
            receiver, _ = _first_item(entry)
            contacts.add(receiver)
        return {"stats": {"received_count": len(self.inbox), "total_contacts": len(contacts)}}
