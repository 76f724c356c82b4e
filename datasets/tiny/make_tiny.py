"""Write the bundled tiny dataset: invented functions, templated questions, BFCL's file format.

Run ``python datasets/tiny/make_tiny.py`` to regenerate ``tiny_train.json``,
``tiny_eval.json`` and their ``possible_answer/`` files (deterministic) in ``fcenv/bundled/``,
where they ship with the package. The dataset is
made for a model of about a million parameters trained on two CPU cores: few functions,
short descriptions, questions that state every argument, so the skill to learn is picking
the function and copying the values into a call. Ids carry BFCL categories (``simple_python``,
``multiple``, ``parallel``), so the checkers apply BFCL's rules for each.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "fcenv" / "bundled"  # package data
SEED = 20240611
N_TRAIN = 900
N_EVAL = 150

CITIES = ["Paris", "Rome", "Tokyo", "Berlin", "Madrid", "Oslo", "Cairo", "Lima", "Seoul", "Dublin",
          "Vienna", "Prague", "Lisbon", "Athens", "Boston", "Denver", "Sydney", "Nairobi"]
NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy",
         "Mallory", "Oscar", "Peggy", "Trent"]
LANGUAGES = ["French", "German", "Spanish", "Italian", "Japanese", "Korean", "Dutch", "Greek"]
PHRASES = ["good morning", "thank you", "see you soon", "where is the station", "happy birthday",
           "I am hungry", "the bill please", "nice to meet you"]
MESSAGES = ["call me back", "running late", "lunch at noon", "meeting moved", "see you there",
            "happy new year", "on my way"]
SYMBOLS = ["AAPL", "MSFT", "GOOG", "AMZN", "TSLA", "NVDA", "META", "IBM", "ORCL", "INTC"]
ARTISTS = ["Adele", "Coldplay", "Queen", "Shakira", "Drake", "Muse", "Blur", "Abba"]
RESTAURANTS = ["Luigi", "Sakura", "El Toro", "Le Petit", "Golden Wok", "Blue Fin"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD"]
LENGTH_UNITS = ["meters", "feet", "inches", "miles", "kilometers", "yards"]
TEMP_UNITS = ["celsius", "fahrenheit"]


def _param(kind: str, text: str, enum: list[str] | None = None) -> dict:
    spec = {"type": kind, "description": text}
    if enum:
        spec["enum"] = enum
    return spec


def _doc(name: str, text: str, params: dict, required: list[str]) -> dict:
    return {"name": name, "description": text,
            "parameters": {"type": "dict", "properties": params, "required": required}}


FUNCTIONS = {
    "get_weather": _doc("get_weather", "Current weather in a city.", {
        "city": _param("string", "City name."),
        "unit": _param("string", "Temperature unit.", TEMP_UNITS)}, ["city", "unit"]),
    "convert_length": _doc("convert_length", "Convert a length between units.", {
        "value": _param("integer", "The length."),
        "from_unit": _param("string", "Unit of the value."),
        "to_unit": _param("string", "Unit wanted.")}, ["value", "from_unit", "to_unit"]),
    "add_numbers": _doc("add_numbers", "Add two integers.", {
        "a": _param("integer", "First number."),
        "b": _param("integer", "Second number.")}, ["a", "b"]),
    "multiply_numbers": _doc("multiply_numbers", "Multiply two integers.", {
        "a": _param("integer", "First number."),
        "b": _param("integer", "Second number.")}, ["a", "b"]),
    "set_alarm": _doc("set_alarm", "Set an alarm.", {
        "hour": _param("integer", "Hour, 0 to 23."),
        "minute": _param("integer", "Minute, 0 to 59.")}, ["hour", "minute"]),
    "book_table": _doc("book_table", "Book a restaurant table.", {
        "restaurant": _param("string", "Restaurant name."),
        "people": _param("integer", "Number of guests.")}, ["restaurant", "people"]),
    "translate_text": _doc("translate_text", "Translate text.", {
        "text": _param("string", "Text to translate."),
        "language": _param("string", "Target language.")}, ["text", "language"]),
    "send_message": _doc("send_message", "Send a text message.", {
        "to": _param("string", "Recipient name."),
        "text": _param("string", "Message body.")}, ["to", "text"]),
    "get_stock_price": _doc("get_stock_price", "Latest price of a stock.", {
        "symbol": _param("string", "Ticker symbol.")}, ["symbol"]),
    "play_music": _doc("play_music", "Play songs by an artist.", {
        "artist": _param("string", "Artist name."),
        "minutes": _param("integer", "How long to play.")}, ["artist", "minutes"]),
    "convert_currency": _doc("convert_currency", "Convert money between currencies.", {
        "amount": _param("integer", "Amount of money."),
        "source": _param("string", "Currency code of the amount."),
        "target": _param("string", "Currency code wanted.")}, ["amount", "source", "target"]),
}


def _draw(rng: random.Random, name: str) -> tuple[dict, list[str]]:
    """Arguments for one call of ``name`` and the question phrasings that state them."""
    if name == "get_weather":
        a = {"city": rng.choice(CITIES), "unit": rng.choice(TEMP_UNITS)}
        return a, [f"What is the weather in {a['city']} in {a['unit']}?",
                   f"Weather for {a['city']}, {a['unit']} please.",
                   f"How warm is it in {a['city']}? Use {a['unit']}."]
    if name == "convert_length":
        src, dst = rng.sample(LENGTH_UNITS, 2)
        a = {"value": rng.randint(1, 99), "from_unit": src, "to_unit": dst}
        return a, [f"Convert {a['value']} {src} to {dst}.",
                   f"How many {dst} is {a['value']} {src}?"]
    if name in ("add_numbers", "multiply_numbers"):
        a = {"a": rng.randint(1, 99), "b": rng.randint(1, 99)}
        if name == "add_numbers":
            return a, [f"Add {a['a']} and {a['b']}.", f"What is {a['a']} plus {a['b']}?"]
        return a, [f"Multiply {a['a']} by {a['b']}.", f"What is {a['a']} times {a['b']}?"]
    if name == "set_alarm":
        a = {"hour": rng.randint(0, 23), "minute": rng.randint(0, 59)}
        return a, [f"Set an alarm for hour {a['hour']} minute {a['minute']}.",
                   f"Wake me at {a['hour']} hours and {a['minute']} minutes."]
    if name == "book_table":
        a = {"restaurant": rng.choice(RESTAURANTS), "people": rng.randint(1, 12)}
        return a, [f"Book a table at {a['restaurant']} for {a['people']} people.",
                   f"Reserve {a['restaurant']} for {a['people']}."]
    if name == "translate_text":
        a = {"text": rng.choice(PHRASES), "language": rng.choice(LANGUAGES)}
        return a, [f"Translate '{a['text']}' to {a['language']}.",
                   f"How do you say '{a['text']}' in {a['language']}?"]
    if name == "send_message":
        a = {"to": rng.choice(NAMES), "text": rng.choice(MESSAGES)}
        return a, [f"Text {a['to']}: '{a['text']}'.",
                   f"Send {a['to']} the message '{a['text']}'."]
    if name == "get_stock_price":
        a = {"symbol": rng.choice(SYMBOLS)}
        return a, [f"What is the price of {a['symbol']}?", f"Quote {a['symbol']} stock."]
    if name == "play_music":
        a = {"artist": rng.choice(ARTISTS), "minutes": rng.randint(5, 90)}
        return a, [f"Play {a['artist']} for {a['minutes']} minutes.",
                   f"Put on {a['artist']} songs for {a['minutes']} minutes."]
    if name == "convert_currency":
        src, dst = rng.sample(CURRENCIES, 2)
        a = {"amount": rng.randint(1, 999), "source": src, "target": dst}
        return a, [f"Convert {a['amount']} {src} to {dst}.",
                   f"How much is {a['amount']} {src} in {dst}?"]
    raise KeyError(name)


# Functions whose parallel questions read naturally ("... and ...").
PARALLEL_OK = ["get_weather", "get_stock_price", "add_numbers", "book_table", "play_music", "set_alarm"]


def _entry(rng: random.Random, category: str) -> tuple[str, list[dict], list[dict]]:
    names = sorted(FUNCTIONS)
    if category == "parallel":
        name = rng.choice(PARALLEL_OK)
        first, texts1 = _draw(rng, name)
        second, texts2 = _draw(rng, name)
        while second == first:
            second, texts2 = _draw(rng, name)
        question = rng.choice(texts1) + " " + rng.choice(texts2)
        calls = [(name, first), (name, second)]
        functions = [FUNCTIONS[name]]
    else:
        name = rng.choice(names)
        args, texts = _draw(rng, name)
        question = rng.choice(texts)
        calls = [(name, args)]
        functions = [FUNCTIONS[name]]
        if category == "multiple":
            others = rng.sample([n for n in names if n != name], rng.randint(1, 2))
            functions = [FUNCTIONS[n] for n in rng.sample([name, *others], len(others) + 1)]
    answer = [{n: {k: [v] for k, v in a.items()}} for n, a in calls]
    return question, functions, answer


def build(count: int, rng: random.Random, avoid: set[str]) -> list[tuple[str, list[dict], list[dict], str]]:
    mix = ["simple_python"] * 5 + ["multiple"] * 3 + ["parallel"] * 2
    out, seen = [], set(avoid)
    while len(out) < count:
        category = mix[len(out) % len(mix)]
        question, functions, answer = _entry(rng, category)
        if question in seen:
            continue
        seen.add(question)
        out.append((question, functions, answer, category))
    return out


def write(name: str, rows: list[tuple[str, list[dict], list[dict], str]], counters: dict[str, int]) -> None:
    """``counters``: the next number of each category, shared by the splits, so that an id names
    one entry of the bundled data (a result file answering the other split is then refused,
    not scored against the wrong questions)."""
    questions, answers = [], []
    for question, functions, answer, category in rows:
        index = counters.get(category, 0)
        counters[category] = index + 1
        entry_id = f"{category}_{index}"
        questions.append({"id": entry_id, "question": [[{"role": "user", "content": question}]],
                          "function": functions})
        answers.append({"id": entry_id, "ground_truth": answer})
    write_split(name, questions, answers)


def write_split(name: str, questions: list[dict], answers: list[dict]) -> None:
    """A question file and its possible_answer/ file, as BFCL lays them out (JSON Lines)."""
    (OUT / "possible_answer").mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text("".join(json.dumps(q) + "\n" for q in questions))
    (OUT / "possible_answer" / name).write_text("".join(json.dumps(a) + "\n" for a in answers))


def main() -> None:
    rng = random.Random(SEED)
    eval_rows = build(N_EVAL, rng, set())
    train_rows = build(N_TRAIN, rng, {q for q, *_ in eval_rows})
    counters: dict[str, int] = {}
    write("tiny_eval.json", eval_rows, counters)
    write("tiny_train.json", train_rows, counters)


if __name__ == "__main__":
    main()
