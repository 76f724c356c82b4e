"""A public-style training set that copies nothing of BFCL, and what decontamination flags in it.

``records`` writes OpenAI-layout records from templates in the style of public function-calling
sets (Glaive, Hermes, ToolACE, xLAM): about seven in ten ask OpenAI's example tool ``WEATHER``,
``get_current_weather(location, unit)``, in many phrasings and cities, the rest other tools.
``flagged`` converts them with ``fcenv.sources`` and looks every task up in the index of BFCL's
test questions: every task flagged is a false positive (``bench/bench_decontaminate.py``).
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

SEED = 20250611

WEATHER = {"type": "function", "function": {
    "name": "get_current_weather", "description": "Get the current weather in a given location",
    "parameters": {"type": "object", "required": ["location"], "properties": {
        "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}}

CITIES = ["Reykjavik", "Oslo", "Lisbon", "Nairobi", "Lima", "Hanoi", "Perth", "Toronto", "Denver, CO", "Austin, TX",
          "Seattle, WA", "Boise, ID", "Kyoto", "Cairo", "Quito", "Tallinn", "Dublin", "Porto", "Bergen", "Hobart",
          "Anchorage, AK", "Tucson, AZ", "Madison, WI", "Calgary", "Montevideo", "Krakow", "Seville", "Bruges", "Cusco",
          "Marrakesh", "Zanzibar", "Ushuaia", "Helsinki", "Gdansk", "Valletta", "Bologna", "Savannah, GA",
          "Portland, ME", "Burlington, VT", "Santa Fe, NM"]

# (template, whether it names a unit): the phrasings of public sets' weather questions.
WEATHER_TEMPLATES = [
    ("Is it going to be chilly in {city} this evening? Tell me in {unit}.", True),
    ("What's the weather like in {city} right now?", False),
    ("Can you tell me the current temperature in {city} in {unit}?", True),
    ("How hot is it in {city} today? Please give it in {unit}.", True),
    ("I'm flying to {city} tomorrow morning. What's the weather there, in {unit}?", True),
    ("Do I need an umbrella in {city} today?", False),
    ("Check the current conditions in {city} for me, using {unit}.", True),
    ("Tell me how cold it is in {city} at the moment, in degrees {unit}.", True),
    ("Could you look up the weather for {city}? I prefer {unit}.", True),
    ("What is the temperature outside in {city}? Use {unit} please.", True),
    ("My sister lives in {city}. Is it sunny there now?", False),
    ("Give me the current weather report for {city}.", False),
    ("Is it warm enough for a picnic in {city} today? Answer in {unit}.", True),
    ("We are planning a hike near {city}. How's the weather, in {unit}?", True),
    ("Please tell me the weather in {city} in {unit}, I need to pack.", True),
    ("How windy is it in {city} right now?", False),
    ("Should I wear a jacket in {city} tonight? Temperatures in {unit} please.", True),
    ("Find out what the weather is in {city}, and tell me in {unit}.", True),
    ("What's the current temperature in {city}, in {unit}?", True),
    ("Is it snowing in {city} at the moment?", False),
    ("Get me the weather in {city}. I want the temperature in {unit}.", True),
    ("How's the weather looking in {city}? Report it in {unit}.", True),
    ("Is it humid in {city} today?", False),
    ("Tell me whether it's raining in {city} right now.", False),
]

# Other tools of such sets, asked beside the weather (their function sets are no BFCL entry's).
OTHERS = [
    ({"name": "convert_currency", "description": "Convert an amount from one currency to another",
      "parameters": {"type": "object", "required": ["amount", "from_currency", "to_currency"], "properties": {
          "amount": {"type": "number", "description": "The amount to convert"},
          "from_currency": {"type": "string", "description": "The currency to convert from"},
          "to_currency": {"type": "string", "description": "The currency to convert to"}}}},
     ["How much is {n} US dollars in euros?", "Convert {n} yen to British pounds, please.",
      "I have {n} Canadian dollars. What is that in Swiss francs?"],
     lambda city, n: {"amount": n, "from_currency": "USD", "to_currency": "EUR"}),
    ({"name": "search_restaurants", "description": "Search for restaurants in a location",
      "parameters": {"type": "object", "required": ["location"], "properties": {
          "location": {"type": "string", "description": "Where to search"},
          "cuisine": {"type": "string", "description": "The type of food"}}}},
     ["Find me a good Thai place in {city}.", "Any vegetarian restaurants around {city}?",
      "I'm hungry in {city}. Where can I get sushi?"],
     lambda city, n: {"location": city}),
    ({"name": "set_reminder", "description": "Set a reminder for a task",
      "parameters": {"type": "object", "required": ["task", "minutes"], "properties": {
          "task": {"type": "string", "description": "What to be reminded of"},
          "minutes": {"type": "integer", "description": "In how many minutes"}}}},
     ["Remind me to call mom in {n} minutes.", "Set a reminder to take the laundry out in {n} minutes."],
     lambda city, n: {"task": "the reminder", "minutes": n}),
]


def records(count: int, seed: int = SEED) -> list[dict]:
    """``count`` records in OpenAI's messages layout, about seven in ten asking the weather."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        if rng.random() < 0.7:
            template, names_unit = rng.choice(WEATHER_TEMPLATES)
            city, unit = rng.choice(CITIES), rng.choice(["celsius", "fahrenheit", "Celsius", "Fahrenheit"])
            arguments = {"location": city, **({"unit": unit.lower()} if names_unit else {})}
            question, tool, name = template.format(city=city, unit=unit), WEATHER, "get_current_weather"
        else:
            doc, templates, answer = rng.choice(OTHERS)
            city, n = rng.choice(CITIES), rng.randint(2, 500)
            question = rng.choice(templates).format(city=city, n=n)
            tool, name, arguments = {"type": "function", "function": doc}, doc["name"], answer(city, n)
        out.append({"messages": [{"role": "user", "content": question},
                                 {"role": "assistant", "tool_calls": [{"type": "function", "function": {
                                     "name": name, "arguments": arguments}}]}],
                    "tools": [tool]})
    return out


def flagged(count: int, bfcl_dir: Path, seed: int = SEED) -> tuple[int, list[tuple[str, str]], Counter]:
    """The tasks of ``records(count)`` that decontamination flags: their number, the (question,
    why) of each, and the count by how they were flagged."""
    from fcenv.sources import get_format
    from fcenv.sources.convert import convert_records
    from fcenv.sources.decontaminate import BfclIndex

    conversion = convert_records(list(enumerate(records(count, seed), start=1)), get_format("openai"),
                                 "public_style.jsonl")
    index = BfclIndex.from_dir(bfcl_dir)
    found = [(entry["question"][0][0]["content"], match) for entry in conversion.entries
             if (match := index.match(entry["question"], entry["function"])) is not None]
    return len(conversion.entries), [(question, str(match)) for question, match in found], \
        Counter(match.how for _, match in found)
