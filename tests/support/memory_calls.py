"""Scripted call sequences and conversation chains for the memory backends' differential tests
(no tests here).

A run is one chain of conversations on one backend class and scenario, as BFCL's inference
runs them: prerequisite conversations (ids with ``prereq``; ``-0`` starts the chain) flush
their memory at the end, questions start from the latest flush. ``run_ours`` plays a chain on
our classes with ``MemorySnapshots``; the oracle's ``memory`` op plays the same chain on
BFCL's, writing real snapshot files in a temporary result folder.

Calls are {name, args, kwargs}. The pools mix ordinary values with hostile ones: keys that are
not snake_case or not strings, values at and past every length limit, wrong-typed counts,
unhashable keys, unknown functions and arguments, private method names.
"""

from __future__ import annotations

import json
import random
from typing import Any

from fcenv.backends.memory_snapshots import MemorySnapshots, is_prerequisite
from fcenv.multi_turn.executor import ERROR_PREFIX, ToolSession, result_string
from harness.oracle import to_jsonable

# fmt: off
KEYS = ["user_name", "user_age", "favorite_color", "home_city", "order_2024", "a", "x1_y2", "key\n",
        "User Name", "user-name", "user name", "_hidden", "a__b", "1abc", "", "ünï_cødé", "UPPER",
        5, 3.5, None, True, [1, 2], {"a": 1}, ("t",), "a" * 5000, "latte_preference", "kitchen_counter_sqft"]
VALUES = ["Michael", "35", "strawberry matcha latte", "", "x" * 299, "x" * 300, "x" * 301, "y" * 1999,
          "y" * 2000, "y" * 2001, 42, 4.25, None, False, [1, "a"], {"k": [1]}, "ünïcødé ✓", "line\nbreak",
          "It's \"quoted\""]
QUERIES = ["user name", "favorite", "", "UNKNOWN words here", "home_city", "age of the user", "a a a",
           5, None, ["user"], {"q": 1}, "Latte"]
COUNTS = [1, 2, 3, 5, 0, -1, -3, 100, None, "2", 2.5, True, [1]]
TEXTS = ["I live in Seattle.", " Age 35.", "", "Seattle", "z" * 5000, "z" * 10000, "z" * 10001, 7, None,
         [1], {"a": "b"}, "ünïcødé", "Seattle. "]
# fmt: on

# The vector memory's texts and queries: every string here has an embedding in ``embedding_table``.
VECTOR_TEXTS = ["I live in Seattle.", "My name is Michael.", "I like strawberry matcha latte.", "Seattle",
                "I live in Seattle.", "", "ünïcødé ✓", "v" * 300, "v" * 301, "w" * 2000, "w" * 2001, "order #42 shipped",
                "allergic to peanuts", "kitchen counter: 38 sq ft"]
VECTOR_QUERIES = ["where do I live", "name", "latte", "peanuts", "", "Seattle", "order"]
VECTOR_IDS = [0, 1, 2, 3, 4, 5, 6, 8, 12, 1.0, True, False, 2.5, "1", -1, None, [1], 10 ** 30]
VECTOR_FUNCTIONS = ["core_memory_add", "core_memory_remove", "core_memory_update", "core_memory_clear",
                    "core_memory_retrieve", "core_memory_retrieve_all", "archival_memory_add", "archival_memory_remove",
                    "archival_memory_update", "archival_memory_clear", "archival_memory_retrieve",
                    "archival_memory_retrieve_all"]
_VECTOR_WEIGHTS = {"add": 8, "clear": 0.4, "retrieve": 4}
KV_FUNCTIONS = ["core_memory_add", "core_memory_remove", "core_memory_replace", "core_memory_clear",
                "core_memory_retrieve", "core_memory_list_keys", "core_memory_key_search", "core_memory_retrieve_all",
                "archival_memory_add", "archival_memory_remove", "archival_memory_replace", "archival_memory_clear",
                "archival_memory_retrieve", "archival_memory_list_keys", "archival_memory_key_search"]
_KV_WEIGHTS = {"add": 9, "clear": 0.4}
REC_SUM_FUNCTIONS = ["memory_append", "memory_update", "memory_clear", "memory_replace", "memory_retrieve"]
ODD_NAMES = ["core_memory_delete", "memory_search", "_similarity_search", "_is_valid_key_format", "_load_scenario",
             "_flush_memory_to_local_file", "retrieve"]


def _kv_call(rng: random.Random, known: list[str]) -> dict[str, Any]:
    # Adds weigh most, so the stores fill up (and overflow); clears weigh least.
    name = rng.choices(KV_FUNCTIONS, weights=[_KV_WEIGHTS.get(f.split("_memory_")[1], 2) for f in KV_FUNCTIONS])[0]
    key = rng.choice(known) if known and rng.random() < 0.5 else rng.choice(KEYS)
    kwargs: dict[str, Any]
    if name.endswith(("_add", "_replace")):
        kwargs = {"key": key, "value": rng.choice(VALUES)}
    elif name.endswith(("_remove", "_retrieve")):
        kwargs = {"key": key}
    elif name.endswith("_key_search"):
        kwargs = {"query": rng.choice(known + QUERIES) if known else rng.choice(QUERIES)}
        if rng.random() < 0.5:
            kwargs["k"] = rng.choice(COUNTS)
    else:
        kwargs = {}
    return kwargs and _odd(rng, name, kwargs) or {"name": name, "args": [], "kwargs": kwargs}


def _rec_sum_call(rng: random.Random, known: list[str]) -> dict[str, Any]:
    name = rng.choice(REC_SUM_FUNCTIONS)
    if name in ("memory_append", "memory_update"):
        kwargs = {"text": rng.choice(TEXTS)}
    elif name == "memory_replace":
        old = rng.choice(known + TEXTS) if known else rng.choice(TEXTS)
        kwargs = {"old_text": old, "new_text": rng.choice(TEXTS[:4] + ["", "Portland", 3])}
    else:
        kwargs = {}
    return kwargs and _odd(rng, name, kwargs) or {"name": name, "args": [], "kwargs": kwargs}


def _odd(rng: random.Random, name: str, kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """Now and then a call in a hostile shape: positional, an extra or a missing argument, an
    unknown or private function name. None keeps the call as it is."""
    roll = rng.random()
    if roll < 0.06:
        return {"name": name, "args": list(kwargs.values()), "kwargs": {}}
    if roll < 0.09:
        return {"name": name, "args": [], "kwargs": {**kwargs, "extra": 1}}
    if roll < 0.12:
        return {"name": name, "args": [], "kwargs": dict(list(kwargs.items())[1:])}
    if roll < 0.15:
        return {"name": rng.choice(ODD_NAMES), "args": [], "kwargs": kwargs}
    if roll < 0.17:
        return {"name": name, "args": list(kwargs.values()) + ["surplus"], "kwargs": {}}
    return None


def _vector_call(rng: random.Random, known: list[str]) -> dict[str, Any]:
    name = rng.choices(VECTOR_FUNCTIONS, weights=[_VECTOR_WEIGHTS.get(f.split("_memory_")[1], 2)
                                                  for f in VECTOR_FUNCTIONS])[0]
    # Now and then a value that is not a string where a text goes.
    text = rng.choice(VECTOR_TEXTS) if rng.random() < 0.9 else rng.choice([7, None, ["a"], ["a", "b"], [], {"t": 1}])
    if name.endswith("_add"):
        kwargs = {"text": text}
    elif name.endswith("_update"):
        kwargs = {"vec_id": rng.choice(VECTOR_IDS), "new_text": text}
    elif name.endswith("_remove"):
        kwargs = {"vec_id": rng.choice(VECTOR_IDS)}
    elif name.endswith("_retrieve"):
        query = rng.choice(VECTOR_QUERIES + VECTOR_TEXTS[:4]) if rng.random() < 0.9 else rng.choice([3, None, ["q"]])
        kwargs = {"query": query}
        if rng.random() < 0.6:
            kwargs["top_k"] = rng.choice(COUNTS + [1, 1, 2, 7, 50, 4.0, 0.5])
    else:
        kwargs = {}
    return kwargs and _odd(rng, name, kwargs) or {"name": name, "args": [], "kwargs": kwargs}


def embedding_table(seed: int = 0) -> dict[str, list[float]]:
    """A 384-wide vector for every vector-memory string: three entries of +-1/2 or +-1/4 among the
    first six, the rest zero. Their inner products are exact in float32 whatever the order of
    the sums (faiss' SIMD, numpy's BLAS), and with so few directions ties are common."""
    rng = random.Random(seed)
    table = {}
    for text in dict.fromkeys(VECTOR_TEXTS + VECTOR_QUERIES):
        vector = [0.0] * 384
        for dim in rng.sample(range(6), 3):
            vector[dim] = rng.choice([0.5, -0.5, 0.25, -0.25])
        table[text] = vector
    return table


CALLS = {"MemoryAPI_kv": _kv_call, "MemoryAPI_rec_sum": _rec_sum_call, "MemoryAPI_vector": _vector_call}



def chain(class_name: str, scenario: str, rng: random.Random, conversations: int, calls: int,
          start: int = 0) -> list[dict[str, Any]]:
    """Prerequisite conversations ``start``.. of a chain, then two questions; ``calls`` calls each.
    Keys and texts written earlier come back as arguments, so hits are common."""
    backend = class_name.split("_", 1)[1]
    known: list[str] = []
    out = []
    ids = [f"memory_{backend}_prereq_{n}-{scenario}-{n}" for n in range(start, start + conversations)]
    ids += [f"memory_{backend}_{n}-{scenario}-{n}" for n in range(2)]
    for test_id in ids:
        sequence = []
        for _ in range(calls):
            call = CALLS[class_name](rng, known)
            sequence.append(call)
            for value in call["kwargs"].values():
                if isinstance(value, str) and value and len(value) < 100:
                    known.append(value)
        out.append({"test_id": test_id, "calls": sequence})
    return out


def realistic_chain(class_name: str, scenario: str, prereq_entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a diligent model might write in BFCL's own prerequisite conversations: each user
    message stored under a key made of its first words (kv) or appended (rec_sum), with
    searches and reads in between, then one question that searches the memory."""
    backend = class_name.split("_", 1)[1]
    out = []
    for entry in prereq_entries:
        calls = []
        for turn in entry["question"]:
            for message in turn:
                text = message["content"]
                if class_name == "MemoryAPI_kv":
                    words = ["".join(c for c in w.lower() if c.isalnum()) for w in text.split()[:3]]
                    key = "_".join(w for w in words if w) or "note"
                    key = key if key[0].isalpha() else f"n_{key}"
                    calls.append({"name": "archival_memory_add", "args": [], "kwargs": {"key": key, "value": text}})
                    calls.append({"name": "core_memory_add", "args": [], "kwargs": {"key": key, "value": text[:300]}})
                    calls.append({"name": "archival_memory_key_search", "args": [], "kwargs": {"query": text[:60]}})
                else:
                    calls.append({"name": "memory_append", "args": [], "kwargs": {"text": text[:400] + "\n"}})
        test_id = entry["id"].replace("memory", f"memory_{backend}", 1)
        out.append({"test_id": test_id, "calls": calls})
    question = {"name": "core_memory_key_search" if class_name == "MemoryAPI_kv" else "memory_retrieve",
                "args": [], "kwargs": {"query": "what is my name", "k": 3} if class_name == "MemoryAPI_kv" else {}}
    out.append({"test_id": f"memory_{backend}_0-{scenario}-0", "calls": [question]})
    return out


def run_ours(class_name: str, scenario: str, conversations: list[dict[str, Any]]) -> dict[str, Any]:
    """The chain on our classes, as the oracle's ``memory`` op plays it on BFCL's."""
    snapshots = MemorySnapshots()
    out = []
    for conversation in conversations:
        test_id = conversation["test_id"]
        session = ToolSession([class_name], {class_name: snapshots.config_for(class_name, scenario, test_id)})
        instance = session.instances[class_name]
        context = instance._dump_core_memory_to_context()
        results = []
        for call in conversation["calls"]:
            target = session.routes.get(call["name"])
            if target is None:
                results.append(f"{ERROR_PREFIX}name '{call['name']}' is not defined")
                continue
            try:
                results.append(result_string(getattr(target, call["name"])(*call["args"], **call["kwargs"])))
            except Exception as exc:
                results.append(f"{ERROR_PREFIX}{exc}")
        if is_prerequisite(test_id):
            snapshots.flush(class_name, scenario, test_id, instance._snapshot())
        out.append({"context": context, "results": results, "memory": json.loads(json.dumps(instance._snapshot()))})
    return {"conversations": out}


def memory_request(class_name: str, scenario: str, conversations: list[dict[str, Any]],
                   embeddings: dict[str, list[float]] | None = None) -> dict[str, Any]:
    return {"op": "memory", "class": class_name, "scenario": scenario, "embeddings": embeddings or {},
            "conversations": [{"test_id": c["test_id"],
                               "calls": [{**call, "args": to_jsonable(call["args"]), "kwargs": to_jsonable(call["kwargs"])}
                                         for call in c["calls"]]} for c in conversations]}


_ENCODED = {"_add": ("text", 0), "_update": ("new_text", 1), "_retrieve": ("query", 0)}


def _reaches_encoder_untyped(call: dict[str, Any]) -> bool:
    """A vector-memory call that hands its encoder something that is not a string: BFCL's result
    there depends on its sentence-transformers version (``fcenv.backends.memory_vector``), so for
    such a call only "it failed" and the state it left are compared."""
    for suffix, (name, position) in _ENCODED.items():
        if call["name"].endswith(suffix):
            args = call["args"]
            value = call["kwargs"].get(name, args[position] if len(args) > position else "")
            return not isinstance(value, str)
    return False


def differences(label: str, ours: dict[str, Any], theirs: dict[str, Any],
                conversations: list[dict[str, Any]] | None = None) -> list[str]:
    problems = []
    for index, (mine, ref) in enumerate(zip(ours["conversations"], theirs["conversations"])):
        where = f"{label}, conversation {index}"
        calls = conversations[index]["calls"] if conversations else [None] * len(mine["results"])
        if mine["context"] != ref["context"]:
            problems.append(f"{where}: context ours {mine['context'][:200]!r} != reference {ref['context'][:200]!r}")
        for n, (a, b, call) in enumerate(zip(mine["results"], ref["results"], calls)):
            if a != b and call is not None and _reaches_encoder_untyped(call) and a.startswith(ERROR_PREFIX) \
                    and b.startswith(ERROR_PREFIX):
                continue
            if a != b:
                problems.append(f"{where}, call {n}: ours {a[:300]!r} != reference {b[:300]!r}")
        if len(mine["results"]) != len(ref["results"]):
            problems.append(f"{where}: {len(mine['results'])} results != {len(ref['results'])}")
        if mine["memory"] != ref["memory"]:
            problems.append(f"{where}: memory ours {str(mine['memory'])[:300]} != reference {str(ref['memory'])[:300]}")
    if len(ours["conversations"]) != len(theirs["conversations"]):
        problems.append(f"{label}: conversation counts differ")
    return problems
