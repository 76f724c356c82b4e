"""Write the bundled multi-turn dataset: tasks on the package's real MathAPI and MessageAPI
backends, in BFCL's multi-turn format.

Run ``python datasets/tiny/make_multi_turn.py`` to regenerate ``multi_turn_train.json``,
``multi_turn_eval.json`` and their ``possible_answer/`` files (deterministic) in ``fcenv/bundled/``. Made for a model
of about a million parameters on two CPU cores: short requests, a few functions, small
scenarios. Every task takes at least two calls, and in every task a later call needs a value
that only an earlier call's result shows (look up, then act):

- a chain of arithmetic ("Add 12 and 30, then multiply the result by 3."): the second call
  takes the first one's result;
- a message to a colleague ("Send 'lunch at noon' to Bob."): the user id comes from
  ``get_user_id``, then ``send_message`` takes it; each scenario has its own ids;
- and the same two, spread over two user turns ("Add 5 and 7." then "Now multiply that by 2.").

The function docs are written here, in our words, and carried by each entry (``function``), so
the dataset needs no BFCL files. Ids carry the category ``multi_turn_tiny``.
"""

from __future__ import annotations

import json
import random
from make_tiny import write_split  # the script's folder is on sys.path when it runs

SEED = 20261123
N_TRAIN = 800
N_EVAL = 150
NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Oscar", "Peggy"]
MESSAGES = ["call me back", "running late", "lunch at noon", "meeting moved", "see you there",
            "on my way", "well done", "thanks a lot"]


def _param(kind: str, text: str) -> dict:
    return {"type": kind, "description": text}


def _doc(name: str, text: str, params: dict, required: list[str]) -> dict:
    return {"name": name, "description": text,
            "parameters": {"type": "dict", "properties": params, "required": required}}


MATH_DOCS = [
    _doc("add", "Add two numbers.", {"a": _param("float", "First number."), "b": _param("float", "Second number.")},
         ["a", "b"]),
    _doc("subtract", "Subtract b from a.", {"a": _param("float", "Number to subtract from."),
                                            "b": _param("float", "Number to subtract.")}, ["a", "b"]),
    _doc("multiply", "Multiply two numbers.", {"a": _param("float", "First factor."),
                                               "b": _param("float", "Second factor.")}, ["a", "b"]),
]
MESSAGE_DOCS = [
    _doc("get_user_id", "The user id of a colleague.", {"user": _param("string", "The colleague's name.")}, ["user"]),
    _doc("send_message", "Send a message to a user id.", {"receiver_id": _param("string", "The receiver's user id."),
                                                          "message": _param("string", "The message.")},
         ["receiver_id", "message"]),
]

# (first operation, its phrasing, the follow-up operation, its phrasing in one turn and in a second turn)
CHAINS = [
    ("add", "Add {a} and {b}", "multiply", "then multiply the result by {c}", "Now multiply that by {c}."),
    ("multiply", "Multiply {a} by {b}", "add", "then add {c} to the result", "Now add {c} to that."),
    ("subtract", "Subtract {b} from {a}", "multiply", "then multiply the result by {c}", "Now multiply that by {c}."),
    ("add", "Add {a} and {b}", "subtract", "then subtract {c} from the result", "Now subtract {c} from that."),
]
OPERATIONS = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b}


def _user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def math_task(rng: random.Random, two_turns: bool) -> tuple[list, dict, list, list[str], list]:
    first, first_text, then, then_text, second_turn = rng.choice(CHAINS)
    a, b, c = rng.randint(2, 30), rng.randint(2, 30), rng.randint(2, 9)
    if first == "subtract" and a < b:
        a, b = b, a
    if first == "multiply":
        a, b = rng.randint(2, 12), rng.randint(2, 12)
    result = OPERATIONS[first](a, b)
    if then == "subtract":
        c = rng.randint(1, max(1, min(result, 30)))
    calls = [f"{first}(a={a}, b={b})", f"{then}(a={result}, b={c})"]
    opening = first_text.format(a=a, b=b)
    if two_turns:
        question = [_user(opening + "."), _user(second_turn.format(c=c))]
        answer = [[calls[0]], [calls[1]]]
    else:
        question = [_user(f"{opening}, {then_text.format(c=c)}.")]
        answer = [calls]
    return question, {}, ["MathAPI"], answer, MATH_DOCS


def message_task(rng: random.Random, two_turns: bool) -> tuple[list, dict, list, list[str], list]:
    people = rng.sample(NAMES, 4)
    ids = rng.sample(range(100, 1000), 5)
    user_map = {name: f"USR{number}" for name, number in zip(people, ids)}
    me = f"USR{ids[4]}"
    config = {"MessageAPI": {"user_map": {**user_map, "Me": me}, "user_count": 5, "inbox": [],
                             "message_count": 0, "current_user": me, "random_seed": rng.randint(1, 10 ** 6)}}
    name = rng.choice(people)
    text = rng.choice(MESSAGES)
    calls = [f"get_user_id(user='{name}')", f"send_message(receiver_id='{user_map[name]}', message='{text}')"]
    if two_turns:
        question = [_user(f"What is {name}'s user id?"), _user(f"Send them '{text}'.")]
        answer = [[calls[0]], [calls[1]]]
    else:
        question = [_user(rng.choice([f"Send '{text}' to {name}.", f"Tell {name} '{text}'."]))]
        answer = [calls]
    return question, config, ["MessageAPI"], answer, MESSAGE_DOCS


def build(count: int, rng: random.Random, avoid: set[str]) -> list[tuple]:
    """A mix: half arithmetic, half messages; a third of each over two user turns."""
    out, seen = [], set(avoid)
    while len(out) < count:
        maker = math_task if len(out) % 2 == 0 else message_task
        two_turns = len(out) % 6 in (4, 5)
        question, config, classes, answer, docs = maker(rng, two_turns)
        key = json.dumps([question, answer])
        if key in seen:
            continue
        seen.add(key)
        out.append((question, config, classes, answer, docs))
    return out


def write(name: str, rows: list[tuple], first: int) -> None:
    """Ids from ``first`` on: the splits number their entries from one count, so that an id
    names one entry of the bundled data."""
    questions, answers = [], []
    for index, (question, config, classes, answer, docs) in enumerate(rows, first):
        entry_id = f"multi_turn_tiny_{index}"
        questions.append({"id": entry_id, "question": question, "initial_config": config,
                          "involved_classes": classes, "function": docs})
        answers.append({"id": entry_id, "ground_truth": answer})
    write_split(name, questions, answers)


def main() -> None:
    rng = random.Random(SEED)
    eval_rows = build(N_EVAL, rng, set())
    train_rows = build(N_TRAIN, rng, {json.dumps([q, a]) for q, _, _, a, _ in eval_rows})
    write("multi_turn_eval.json", eval_rows, 0)
    write("multi_turn_train.json", train_rows, len(eval_rows))


if __name__ == "__main__":
    main()
