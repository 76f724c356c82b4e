"""The bundled function docs of BFCL's eight multi-turn classes (``fcenv/bundled/multi_turn_func_doc/``,
written by ``datasets/multi_turn/func_docs.py``): each names exactly its backend's public methods
with their parameters, required ones and types; regenerating changes nothing; no sentence is
BFCL's; and a BFCL-style multi-turn entry beside them loads and plays with them."""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import shutil
import tomllib
from pathlib import Path

import gymnasium as gym
import pytest

import fcenv
from fcenv.backends import FUNC_DOC_FILES, backend_class
from fcenv.data import load_tasks
from fcenv.loader import _validators
from harness.trajectories import ground_truth_steps

ROOT = Path(__file__).resolve().parents[2]
BUNDLED_DOCS = ROOT / "fcenv" / "bundled" / "multi_turn_func_doc"
CLASSES = ["GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "TradingBot", "TravelAPI",
           "VehicleControlAPI"]
# Python annotation -> BFCL's type word
TYPES = {"str": "string", "int": "integer", "float": "float", "bool": "boolean", "list": "array", "dict": "dict"}


def _generator():
    spec = importlib.util.spec_from_file_location("func_docs", ROOT / "datasets" / "multi_turn" / "func_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bundled(cls: str) -> list[dict]:
    lines = (BUNDLED_DOCS / FUNC_DOC_FILES[cls]).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def public_methods(cls: str) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(fn) for name, fn in inspect.getmembers(backend_class(cls), inspect.isfunction)
            if not name.startswith("_")}


def bfcl_type(annotation: str) -> tuple[str, str | None]:
    """(type, item type) of an annotation such as 'str | None' or 'list[float]'."""
    base = annotation.replace(" | None", "").strip()
    match = re.fullmatch(r"(\w+)(?:\[(\w+)\])?", base)
    assert match and match[1] in TYPES, f"no BFCL type for the annotation {annotation!r}"
    return TYPES[match[1]], TYPES.get(match[2]) if match[2] else None


@pytest.mark.parametrize("cls", CLASSES)
def test_docs_follow_the_backend_signatures(cls):
    docs, methods = bundled(cls), public_methods(cls)
    names = [doc["name"] for doc in docs]
    assert sorted(names) == sorted(methods) and len(set(names)) == len(names)
    validator = _validators()["function_doc"]
    for doc in docs:
        assert not list(validator.iter_errors(doc)), doc["name"]
        assert set(doc) == {"name", "description", "parameters"}, doc["name"]
        # one plain sentence per function
        assert doc["description"].endswith(".") and len(re.split(r"(?<=[.!?])\s+", doc["description"])) == 1
        signature = methods[doc["name"]]
        params = {n: p for n, p in signature.parameters.items() if n != "self"}
        schema = doc["parameters"]
        assert schema["type"] == "dict"
        assert list(schema["properties"]) == list(params), doc["name"]
        assert schema["required"] == [n for n, p in params.items() if p.default is inspect.Parameter.empty]
        for name, meta in schema["properties"].items():
            where = f"{cls}.{doc['name']}({name})"
            assert meta["description"].strip(), where
            kind, item = bfcl_type(params[name].annotation)
            assert meta["type"] == kind, where
            if kind == "array":
                assert meta["items"]["type"] in TYPES.values(), where
                assert item is None or meta["items"]["type"] == item, where
            if "default" in meta:
                assert meta["default"] == params[name].default, where
            for enum_holder in (meta, meta.get("items", {})):
                if "enum" in enum_holder:
                    assert enum_holder["type"] == "string" and all(isinstance(v, str) for v in enum_holder["enum"])
            if "enum" in meta and "default" in meta:
                assert meta["default"] in meta["enum"], where


def test_enums_name_what_the_backends_accept():
    """A few fixed sets, read off the backends: a value outside the enum fails there."""
    docs = {cls: {d["name"]: d["parameters"]["properties"] for d in bundled(cls)} for cls in CLASSES}
    assert docs["GorillaFileSystem"]["wc"]["mode"]["enum"] == ["l", "w", "c"]
    assert docs["TravelAPI"]["book_flight"]["travel_class"]["enum"] == ["economy", "business", "first"]
    assert docs["TradingBot"]["place_order"]["order_type"]["enum"] == ["Buy", "Sell"]
    car = docs["VehicleControlAPI"]
    assert car["lockDoors"]["door"]["items"]["enum"] == ["driver", "passenger", "rear_left", "rear_right"]
    assert set(car["activateParkingBrake"]["mode"]["enum"]) == {"engage", "release"}
    assert set(car["setHeadlights"]["mode"]["enum"]) == {"on", "off", "auto"}
    vehicle = backend_class("VehicleControlAPI")()
    vehicle._load_scenario({})
    for option in car["displayCarStatus"]["option"]["enum"]:
        assert "error" not in vehicle.displayCarStatus(option), option
    math = backend_class("MathAPI")()
    for unit in docs["MathAPI"]["si_unit_conversion"]["unit_in"]["enum"]:
        assert "error" not in math.si_unit_conversion(1.0, unit, "m"), unit


def test_the_bundled_files_are_what_the_generator_writes(tmp_path):
    _generator().write_func_docs(tmp_path / "out")
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == sorted(FUNC_DOC_FILES[c] for c in CLASSES)
    assert sorted(p.name for p in BUNDLED_DOCS.iterdir()) == written
    for name in written:
        assert (tmp_path / "out" / name).read_bytes() == (BUNDLED_DOCS / name).read_bytes(), name


def test_the_docs_ship_with_the_package():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["fcenv"]
    shipped = {path for pattern in patterns for path in (ROOT / "fcenv").glob(pattern)}
    assert {BUNDLED_DOCS / FUNC_DOC_FILES[c] for c in CLASSES} <= shipped


def _sentences(text: str) -> list[str]:
    """Sentences of a description, lowercased to their words (BFCL's class preamble, its
    "Tool description:" and "[Enum]:" markers split too)."""
    out = []
    for part in re.split(r"Tool description:|\[Enum\]:", text):
        for sentence in re.split(r"(?<=[.!?;])\s+|\n+", part):
            words = " ".join(re.sub(r"[^a-z0-9]+", " ", sentence.lower()).split())
            if words:
                out.append(words)
    return out


def _descriptions(value) -> list[str]:
    if isinstance(value, dict):
        return [d for k, v in value.items()
                for d in ([v] if k == "description" and isinstance(v, str) else _descriptions(v))]
    if isinstance(value, list):
        return [d for v in value for d in _descriptions(v)]
    return []


def test_no_sentence_is_bfcls(bfcl_dir):
    folder = bfcl_dir / "multi_turn_func_doc"
    files = sorted(folder.glob("*.json"))
    assert files, f"BFCL's function docs not found in {folder}; run `python -m fcenv data bfcl`"
    theirs = {s for f in files for line in f.read_text().splitlines() if line.strip()
              for d in _descriptions(json.loads(line)) for s in _sentences(d)}
    copied = {}
    for cls in CLASSES:
        for doc in bundled(cls):
            for sentence in (s for d in _descriptions(doc) for s in _sentences(d)):
                if sentence in theirs:
                    copied.setdefault(f"{cls}.{doc['name']}", []).append(sentence)
    assert not copied, f"sentences equal to BFCL's: {copied}"
    # Short: well under half of BFCL's docs of the same classes.
    ours = sum((BUNDLED_DOCS / FUNC_DOC_FILES[c]).stat().st_size for c in CLASSES)
    bfcls = sum((folder / FUNC_DOC_FILES[c]).stat().st_size for c in CLASSES)
    assert ours < 0.45 * bfcls, (ours, bfcls)


def test_a_bfcl_style_entry_loads_and_plays_with_the_bundled_docs(tmp_path):
    shutil.copytree(BUNDLED_DOCS, tmp_path / "multi_turn_func_doc")
    (tmp_path / "possible_answer").mkdir()
    entry = {"id": "multi_turn_base_0",
             "question": [[{"role": "user", "content": "Log in as john with password john123 and tweet 'hello' "
                                                       "tagged #news."}],
                          [{"role": "user", "content": "What is 2 plus 3?"}]],
             "initial_config": {"TwitterAPI": {"username": "john", "password": "john123", "authenticated": False,
                                               "tweets": {}, "comments": {}, "retweets": {},
                                               "following_list": [], "tweet_counter": 0}},
             "involved_classes": ["TwitterAPI", "MathAPI"]}
    answer = {"id": "multi_turn_base_0",
              "ground_truth": [["authenticate_twitter(username='john', password='john123')",
                                "post_tweet(content='hello', tags=['#news'])"], ["add(a=2, b=3)"]]}
    path = tmp_path / "multi_turn_mine.json"
    path.write_text(json.dumps(entry) + "\n")
    (tmp_path / "possible_answer" / path.name).write_text(json.dumps(answer) + "\n")

    (task,) = load_tasks(path)
    assert task.functions == bundled("TwitterAPI") + bundled("MathAPI")

    env = gym.make(fcenv.ENV_ID, dataset_path=str(path))
    try:
        obs, _ = env.reset(options={"index": 0})
        post_tweet = next(d for d in bundled("TwitterAPI") if d["name"] == "post_tweet")
        assert post_tweet["description"] in obs
        info: dict = {}
        for turn in ground_truth_steps(task):
            for text in turn:
                _, _, terminated, _, info = env.step(text)
        assert terminated and info["valid"], info.get("error_type")
    finally:
        env.close()
