"""Write the bundled varied dataset: single-turn tasks in BFCL's five AST shapes, for training a
pretrained model (fcenv/bundled/varied_train.json and varied_eval.json, possible_answer/ beside).

Where the tiny dataset is made for a model of a million parameters (ten functions, one argument
shape), this one is made for a real model that already reads and writes JSON: 48 invented
functions over twelve domains, with BFCL's parameter shapes (strings, integers, floats,
booleans, enums, arrays, optional parameters with defaults), and BFCL's categories:

- ``simple_python``: one function, one call;
- ``multiple``: two to four functions, one call of the right one;
- ``parallel``: one function, two or three calls;
- ``parallel_multiple``: two to four functions, two or three calls of different ones;
- ``irrelevance``: functions that cannot serve the request, whose right answer is no call: near
  misses from the request's own domain, requests of another domain, and questions no function
  answers, as in BFCL (three tasks in ten: a model that learns the call format must also learn
  when not to call).

Possible answers follow BFCL's rules: an optional parameter the question does not mention
accepts ``""`` (left out) or its default; one it mentions, the value stated. Names, docs and
questions are invented here (``fcenv data check`` finds none of BFCL's test questions or
function sets in them). Deterministic: ``python datasets/varied/make_varied.py``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "fcenv" / "bundled"
SEED = 20261126
MIX = {"simple_python": 5, "multiple": 5, "parallel": 3, "parallel_multiple": 3, "irrelevance": 7}
N_TRAIN = 2000
N_EVAL = 200
FIRST_ID = 20000  # ids of this set start here, apart from the tiny splits'

CITIES = ["Lyon", "Porto", "Kyoto", "Hamburg", "Valencia", "Bergen", "Alexandria", "Cusco", "Busan", "Cork",
          "Graz", "Brno", "Braga", "Thessaloniki", "Austin", "Boulder", "Perth", "Mombasa", "Quebec City", "Tallinn"]
PEOPLE = ["Amara", "Bilal", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana", "Ines", "Jonas", "Kofi", "Lena",
          "Mateo", "Nadia", "Omar", "Priya"]
LANGS = ["French", "German", "Portuguese", "Italian", "Japanese", "Swahili", "Dutch", "Turkish", "Polish"]
TICKERS = ["AAPL", "MSFT", "NFLX", "AMD", "SHOP", "UBER", "ADBE", "CSCO", "PYPL", "SAP"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "SEK", "INR"]
FOODS = ["lentil soup", "mushroom risotto", "chicken curry", "falafel wrap", "banana bread", "pad thai",
         "shakshuka", "miso ramen"]
GENRES = ["jazz", "blues", "techno", "folk", "classical", "reggae", "hip hop", "ambient"]
COLORS = ["red", "teal", "amber", "violet", "olive", "navy"]
TOPICS = ["solar panels", "sourdough baking", "marathon training", "bird migration", "urban gardening",
          "chess openings", "coral reefs", "electric bikes"]
DEVICES = ["living room lamp", "bedroom heater", "garage door", "kitchen fan", "porch light", "office speaker"]
FILES = ["budget_q3.xlsx", "notes.txt", "report_final.pdf", "photo_042.png", "draft_v2.docx", "data.csv"]


def pick(pool: list) -> Callable[[random.Random], Any]:
    return lambda rng: rng.choice(pool)


def integer(low: int, high: int) -> Callable[[random.Random], int]:
    return lambda rng: rng.randint(low, high)


def decimal(low: float, high: float, digits: int = 1) -> Callable[[random.Random], float]:
    return lambda rng: round(rng.uniform(low, high), digits)


def some(pool: list, low: int = 2, high: int = 3) -> Callable[[random.Random], list]:
    return lambda rng: rng.sample(pool, rng.randint(low, high))


@dataclass
class Param:
    name: str
    kind: str  # BFCL's types: string, integer, float, boolean, array
    text: str
    draw: Callable[[random.Random], Any]
    required: bool = True
    default: Any = None
    said: str = ""  # how a question states an optional value: "in {value} units"
    enum: list | None = None
    items: str = "string"  # an array's item type
    spoken: tuple[str, str] | None = None  # how a question says a boolean (true, false)

    def doc(self) -> dict:
        spec: dict[str, Any] = {"type": self.kind, "description": self.text}
        if self.enum:
            spec["enum"] = self.enum
        if self.kind == "array":
            spec["items"] = {"type": self.items}
        if not self.required and self.default is not None:
            spec["default"] = self.default
        return spec

    def say(self, value: Any) -> str:
        return self.spoken[0 if value else 1] if self.spoken else shown(value)


@dataclass
class Function:
    name: str
    text: str
    params: list[Param]
    asks: list[str]  # questions stating every required value: "{city}", "{days}"
    domain: str = ""
    extra: dict = field(default_factory=dict)

    def doc(self) -> dict:
        return {"name": self.name, "description": self.text,
                "parameters": {"type": "dict", "properties": {p.name: p.doc() for p in self.params},
                               "required": [p.name for p in self.params if p.required]}}


def shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(map(str, value[:-1])) + " and " + str(value[-1]) if len(value) > 1 else str(value[0])
    return str(value)


P, F = Param, Function
FUNCTIONS = [
    # weather
    F("forecast_daily_outlook", "Daily weather forecast for a city over the coming days.", [
        P("city", "string", "Name of the city, e.g. 'Lyon'.", pick(CITIES)),
        P("days", "integer", "How many days ahead, 1 to 14.", integer(2, 14)),
        P("units", "string", "Unit system of the temperatures.", pick(["metric", "imperial"]), False, "metric",
          "in {units} units", enum=["metric", "imperial"])],
      ["What will the weather be in {city} over the next {days} days?", "Give me a {days}-day forecast for {city}."],
      "weather"),
    F("air_quality_index_now", "Current air quality index reported for a city.", [
        P("city", "string", "Name of the city.", pick(CITIES)),
        P("include_pollen", "boolean", "Whether to add the pollen count.", pick([True]), False, False,
          "including the pollen count")],
      ["How clean is the air in {city} right now?", "What's the current air quality index for {city}?"], "weather"),
    F("uv_exposure_peak", "Peak UV index expected today at a place.", [
        P("city", "string", "Name of the city.", pick(CITIES))],
      ["How strong will the sun get in {city} today?", "What's the peak UV index in {city} today?"], "weather"),
    F("sea_water_temperature", "Water temperature at a coastal city's beaches.", [
        P("city", "string", "Coastal city.", pick(CITIES)),
        P("unit", "string", "Temperature unit.", pick(["celsius", "fahrenheit"]), False, "celsius",
          "in {unit}", enum=["celsius", "fahrenheit"])],
      ["How warm is the sea at {city}?", "What is the water temperature at the beaches of {city}?"], "weather"),
    # finance
    F("equity_quote_latest", "Latest trading price of a listed company's shares.", [
        P("ticker", "string", "Stock ticker symbol, e.g. 'AAPL'.", pick(TICKERS)),
        P("exchange", "string", "Exchange to quote on.", pick(["NASDAQ", "NYSE", "XETRA"]), False, "NASDAQ",
          "on {exchange}")],
      ["What is {ticker} trading at?", "Get me the latest share price of {ticker}."], "finance"),
    F("fx_convert_amount", "Convert an amount of money from one currency to another at today's rate.", [
        P("amount", "float", "Amount to convert.", decimal(5, 5000, 2)),
        P("from_currency", "string", "ISO code of the currency held.", pick(CURRENCIES)),
        P("to_currency", "string", "ISO code of the currency wanted.", pick(CURRENCIES))],
      ["Convert {amount} {from_currency} into {to_currency}.", "How much is {amount} {from_currency} in {to_currency}?"],
      "finance"),
    F("loan_monthly_payment", "Monthly payment of a fixed-rate loan.", [
        P("principal", "float", "Amount borrowed.", decimal(1000, 400000, 0)),
        P("annual_rate", "float", "Yearly interest rate in percent.", decimal(1, 9, 2)),
        P("years", "integer", "Length of the loan in years.", integer(1, 30))],
      ["What would I pay each month on a {principal} loan at {annual_rate}% over {years} years?",
       "Compute the monthly payment for borrowing {principal} for {years} years at {annual_rate} percent."],
      "finance"),
    F("compound_savings_growth", "Value of savings after compound interest.", [
        P("deposit", "float", "Starting amount.", decimal(100, 50000, 0)),
        P("rate_percent", "float", "Yearly interest rate in percent.", decimal(0.5, 7, 1)),
        P("years", "integer", "Years of saving.", integer(1, 40)),
        P("compounding", "string", "How often interest is added.", pick(["monthly", "quarterly"]), False, "yearly",
          "compounded {compounding}", enum=["yearly", "quarterly", "monthly"])],
      ["If I put {deposit} away at {rate_percent}% for {years} years, how much will I have?",
       "How much does a deposit of {deposit} grow to in {years} years at {rate_percent} percent?"], "finance"),
    # math
    F("triangle_area_heron", "Area of a triangle from its three side lengths.", [
        P("side_a", "float", "First side.", decimal(2, 30)), P("side_b", "float", "Second side.", decimal(2, 30)),
        P("side_c", "float", "Third side.", decimal(2, 30))],
      ["What is the area of a triangle with sides {side_a}, {side_b} and {side_c}?",
       "Find the area of the triangle whose sides are {side_a}, {side_b} and {side_c}."], "math"),
    F("prime_factors_of", "The prime factorisation of a whole number.", [
        P("number", "integer", "Number to factorise.", integer(12, 99999))],
      ["Factorise {number} into primes.", "What are the prime factors of {number}?"], "math"),
    F("gcd_of_numbers", "Greatest common divisor of a list of integers.", [
        P("numbers", "array", "The integers.", lambda rng: rng.sample(range(6, 400, 6), rng.randint(2, 4)),
          items="integer")],
      ["What is the greatest common divisor of {numbers}?", "Find the GCD of {numbers}."], "math"),
    F("percentage_change_between", "Percentage change from an old value to a new one.", [
        P("old_value", "float", "Value before.", decimal(10, 900)), P("new_value", "float", "Value after.",
                                                                       decimal(10, 900))],
      ["By what percent did the value change from {old_value} to {new_value}?",
       "What's the percentage change going from {old_value} to {new_value}?"], "math"),
    # travel
    F("rail_connections_search", "Search train connections between two cities on a date.", [
        P("origin", "string", "City of departure.", pick(CITIES)), P("destination", "string", "City of arrival.",
                                                                     pick(CITIES)),
        P("date", "string", "Travel date, YYYY-MM-DD.", lambda rng: f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"),
        P("first_class", "boolean", "Only first-class seats.", pick([True]), False, False, "in first class")],
      ["Find trains from {origin} to {destination} on {date}.", "Which trains go from {origin} to {destination} on {date}?"],
      "travel"),
    F("hotel_rooms_available", "Hotel rooms free in a city for a stay.", [
        P("city", "string", "City of the stay.", pick(CITIES)),
        P("nights", "integer", "Number of nights.", integer(1, 10)),
        P("guests", "integer", "Number of guests.", integer(1, 6)),
        P("max_price", "float", "Highest price per night.", decimal(60, 400, 0), False, None,
          "for at most {max_price} a night")],
      ["Find a hotel in {city} for {guests} guests for {nights} nights.",
       "Are there rooms in {city} for {nights} nights, {guests} people?"], "travel"),
    F("airport_code_lookup", "IATA code of a city's main airport.", [
        P("city", "string", "City name.", pick(CITIES))],
      ["What's the airport code for {city}?", "Look up the IATA code of {city}'s airport."], "travel"),
    F("visa_requirement_check", "Whether a citizen of one country needs a visa for another.", [
        P("citizenship", "string", "Country of the passport.", pick(["Canada", "Brazil", "India", "Kenya", "Japan"])),
        P("destination", "string", "Country to visit.", pick(["Turkey", "Vietnam", "Chile", "Morocco", "Norway"])),
        P("stay_days", "integer", "Length of the stay in days.", integer(3, 90), False, 30, "for {stay_days} days")],
      ["Do {citizenship} citizens need a visa for {destination}?",
       "Check whether someone from {citizenship} needs a visa to visit {destination}."], "travel"),
    # food
    F("recipe_nutrition_facts", "Calories and nutrients of a dish per serving.", [
        P("dish", "string", "Name of the dish.", pick(FOODS)),
        P("servings", "integer", "Number of servings.", integer(1, 8), False, 1, "for {servings} servings")],
      ["How many calories are in {dish}?", "Give me the nutrition facts of {dish}."], "food"),
    F("restaurant_table_reserve", "Reserve a table at a restaurant.", [
        P("restaurant", "string", "Restaurant name.", pick(["Casa Verde", "Kiln", "Saffron Court", "The Anchor",
                                                            "Noodle Bar 9", "Olive & Fig"])),
        P("party_size", "integer", "Number of diners.", integer(1, 12)),
        P("time", "string", "Time of the booking, HH:MM (24-hour).",
          lambda rng: f"{rng.randint(11, 22):02d}:{rng.choice(['00', '15', '30', '45'])}"),
        P("outdoor", "boolean", "Seat outside.", pick([True]), False, False, "outside")],
      ["Book a table at {restaurant} for {party_size} at {time}.",
       "Reserve {restaurant} for {party_size} people at {time}."], "food"),
    F("ingredient_substitute_for", "Suggest a substitute for a cooking ingredient.", [
        P("ingredient", "string", "Ingredient to replace.", pick(["buttermilk", "eggs", "butter", "honey", "cream"])),
        P("diet", "string", "Diet the substitute must fit.", pick(["vegan", "gluten-free", "keto"]), False, None,
          "that is {diet}", enum=["vegan", "gluten-free", "keto"])],
      ["What can I use instead of {ingredient}?", "Suggest a replacement for {ingredient} in a recipe."], "food"),
    F("wine_pairing_suggest", "Suggest a wine to go with a dish.", [
        P("dish", "string", "Dish served.", pick(FOODS)),
        P("budget", "float", "Most to spend on the bottle.", decimal(8, 80, 0), False, None, "under {budget}")],
      ["Which wine goes with {dish}?", "Suggest a wine to pair with {dish}."], "food"),
    # messaging
    F("sms_send_text", "Send a text message to a contact.", [
        P("recipient", "string", "Contact name.", pick(PEOPLE)),
        P("body", "string", "Text of the message.", pick(["running ten minutes late", "dinner is ready",
                                                           "call me when you land", "the keys are under the mat"])),
        P("urgent", "boolean", "Mark the message urgent.", pick([True]), False, False, "and mark it urgent")],
      ["Text {recipient}: '{body}'.", "Send {recipient} a message saying '{body}'."], "messaging"),
    F("email_compose_send", "Send an email.", [
        P("to", "string", "Recipient's address.", lambda rng: rng.choice(PEOPLE).lower() + "@example.org"),
        P("subject", "string", "Subject line.", pick(["Quarterly numbers", "Trip plans", "Invoice 3381",
                                                     "Team lunch"])),
        P("cc", "array", "Addresses copied.", lambda rng: [rng.choice(PEOPLE).lower() + "@example.org"], False, [],
          "copying {cc}")],
      ["Email {to} with the subject '{subject}'.", "Send an email to {to} titled '{subject}'."], "messaging"),
    F("calendar_event_create", "Add an event to the calendar.", [
        P("title", "string", "Name of the event.", pick(["dentist", "team sync", "yoga class", "parent meeting"])),
        P("date", "string", "Date, YYYY-MM-DD.", lambda rng: f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"),
        P("duration_minutes", "integer", "Length in minutes.", integer(15, 180), False, 60, "lasting {duration_minutes} minutes")],
      ["Put '{title}' in my calendar on {date}.", "Add a {title} event on {date}."], "messaging"),
    F("contact_phone_lookup", "Phone number of a saved contact.", [
        P("name", "string", "Contact name.", pick(PEOPLE))],
      ["What's {name}'s phone number?", "Look up the number for {name}."], "messaging"),
    # media
    F("playlist_start_genre", "Start a playlist of a music genre.", [
        P("genre", "string", "Music genre.", pick(GENRES)),
        P("shuffle", "boolean", "Shuffle the tracks.", pick([True]), False, False, "on shuffle"),
        P("volume", "integer", "Volume, 0 to 100.", integer(10, 90), False, 50, "at volume {volume}")],
      ["Play some {genre}.", "Start a {genre} playlist."], "media"),
    F("podcast_episode_search", "Search podcast episodes about a topic.", [
        P("topic", "string", "What the episodes are about.", pick(TOPICS)),
        P("max_results", "integer", "Most episodes to return.", integer(3, 20), False, 10, "and show {max_results} of them")],
      ["Find podcast episodes about {topic}.", "Search for podcasts on {topic}."], "media"),
    F("movie_showtimes_near", "Showtimes of a film at cinemas in a city.", [
        P("title", "string", "Film title.", pick(["The Quiet Harbor", "Orbit Nine", "Paper Lanterns", "Red Canyon"])),
        P("city", "string", "City.", pick(CITIES))],
      ["When is '{title}' showing in {city}?", "Find showtimes for '{title}' in {city}."], "media"),
    F("book_summary_fetch", "Short summary of a book.", [
        P("title", "string", "Book title.", pick(["The Salt Road", "Glass Orchard", "Nine Winters", "Low Tide"])),
        P("length", "string", "How long the summary is.", pick(["short", "long"]), False, "short",
          "as a {length} summary", enum=["short", "long"])],
      ["Summarise the book '{title}'.", "What is '{title}' about?"], "media"),
    # home
    F("smart_device_switch", "Turn a smart home device on or off.", [
        P("device", "string", "Device name.", pick(DEVICES)),
        P("on", "boolean", "True to switch on, false to switch off.", pick([True, False]), spoken=("on", "off"))],
      ["Switch the {device} {on}.", "Turn the {device} {on}, please."], "home"),
    F("thermostat_target_set", "Set the thermostat's target temperature.", [
        P("celsius", "float", "Target temperature in Celsius.", decimal(16, 26, 1)),
        P("room", "string", "Room of the thermostat.", pick(["hall", "bedroom", "office"]), False, "hall",
          "in the {room}")],
      ["Set the heating to {celsius} degrees.", "Make it {celsius} °C."], "home"),
    F("grocery_list_add", "Add items to the shopping list.", [
        P("items", "array", "Items to add.", some(["oat milk", "rice", "apples", "coffee", "tofu", "onions", "bread"]))],
      ["Add {items} to my shopping list.", "Put {items} on the grocery list."], "home"),
    F("timer_countdown_start", "Start a countdown timer.", [
        P("minutes", "integer", "Length of the timer.", integer(1, 90)),
        P("label", "string", "Name shown on the timer.", pick(["pasta", "laundry", "tea", "oven"]), False, None,
          "labelled '{label}'")],
      ["Set a timer for {minutes} minutes.", "Start a {minutes}-minute countdown."], "home"),
    # health
    F("bmi_from_measures", "Body mass index from weight and height.", [
        P("weight_kg", "float", "Weight in kilograms.", decimal(40, 130)),
        P("height_m", "float", "Height in metres.", decimal(1.45, 2.05, 2))],
      ["What's the BMI of someone weighing {weight_kg} kg at {height_m} m?",
       "Compute my BMI: {weight_kg} kg, {height_m} m tall."], "health"),
    F("step_goal_progress", "Steps walked today against a goal.", [
        P("goal", "integer", "Daily step goal.", integer(5000, 15000))],
      ["How close am I to my {goal}-step goal today?", "Check my progress towards {goal} steps."], "health"),
    F("water_intake_log", "Log a glass of water.", [
        P("millilitres", "integer", "Amount drunk.", integer(100, 750)),
        P("time", "string", "When, HH:MM.", lambda rng: f"{rng.randint(6, 22):02d}:{rng.choice(['05', '20', '40'])}",
          False, None, "at {time}")],
      ["Log {millilitres} ml of water.", "I just drank {millilitres} millilitres of water, record it."], "health"),
    F("heart_rate_zones", "Training heart-rate zones for an age.", [
        P("age", "integer", "Age in years.", integer(16, 80)),
        P("resting_bpm", "integer", "Resting heart rate.", integer(45, 85), False, None, "with a resting rate of {resting_bpm}")],
      ["What are the heart-rate zones for a {age}-year-old?", "Give me training zones for age {age}."], "health"),
    # files
    F("file_share_link", "Create a sharing link for a file.", [
        P("file_name", "string", "Name of the file.", pick(FILES)),
        P("expires_days", "integer", "Days until the link expires.", integer(1, 30), False, 7, "that expires in {expires_days} days")],
      ["Make a share link for {file_name}.", "Create a link to share {file_name}."], "files"),
    F("file_convert_format", "Convert a document to another format.", [
        P("file_name", "string", "Name of the file.", pick(FILES)),
        P("target_format", "string", "Format wanted.", pick(["pdf", "docx", "txt"]), enum=["pdf", "docx", "txt"])],
      ["Convert {file_name} to {target_format}.", "Turn {file_name} into a {target_format} file."], "files"),
    F("folder_size_report", "Total size of a folder.", [
        P("path", "string", "Folder path.", pick(["/data/docs", "/srv/backups", "/var/media", "/tmp/cache"]))],
      ["How big is {path}?", "Report the size of the folder {path}."], "files"),
    F("trash_restore_file", "Restore a deleted file from the trash.", [
        P("file_name", "string", "Name of the file.", pick(FILES))],
      ["Bring back {file_name} from the trash.", "Restore {file_name}, I deleted it by mistake."], "files"),
    # science
    F("element_atomic_mass", "Atomic mass of a chemical element.", [
        P("element", "string", "Element name or symbol.", pick(["carbon", "neon", "Fe", "sodium", "Ag", "xenon"]))],
      ["What is the atomic mass of {element}?", "Look up the atomic mass of {element}."], "science"),
    F("planet_distance_on", "Distance from Earth to a planet on a date.", [
        P("planet", "string", "Planet name.", pick(["Mars", "Venus", "Jupiter", "Saturn"])),
        P("date", "string", "Date, YYYY-MM-DD.", lambda rng: f"2027-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")],
      ["How far is {planet} from Earth on {date}?", "Distance to {planet} on {date}?"], "science"),
    F("half_life_remaining", "Amount left of a radioactive sample after some time.", [
        P("initial_grams", "float", "Starting mass.", decimal(1, 500)),
        P("half_life_years", "float", "Half-life in years.", decimal(1, 6000, 0)),
        P("years", "float", "Time elapsed in years.", decimal(1, 20000, 0))],
      ["How much of {initial_grams} g remains after {years} years with a half-life of {half_life_years} years?",
       "A {initial_grams} g sample has a half-life of {half_life_years} years: what is left after {years} years?"],
      "science"),
    F("species_range_map", "Where in the world a species lives.", [
        P("species", "string", "Common name of the species.", pick(["snow leopard", "axolotl", "puffin", "okapi"]))],
      ["Where do {species}s live?", "Show the range of the {species}."], "science"),
    # sports
    F("match_score_latest", "Latest score of a team's match.", [
        P("team", "string", "Team name.", pick(["Harbour City FC", "Riverside Rovers", "North Peaks", "Union Blue"])),
        P("sport", "string", "Sport.", pick(["football", "basketball", "hockey"]), False, "football", "in {sport}",
          enum=["football", "basketball", "hockey"])],
      ["What's the score of {team}'s game?", "How are {team} doing in their match?"], "sports"),
    F("race_pace_calculator", "Pace per kilometre for a race distance and finish time.", [
        P("distance_km", "float", "Race distance in km.", pick([5.0, 10.0, 21.1, 42.2])),
        P("finish_minutes", "integer", "Finish time in minutes.", integer(18, 300))],
      ["What pace do I need for {distance_km} km in {finish_minutes} minutes?",
       "Work out my per-km pace: {distance_km} km in {finish_minutes} minutes."], "sports"),
    F("league_table_standings", "Standings table of a league.", [
        P("league", "string", "League name.", pick(["Coastal League", "Premier North", "Metro Cup"])),
        P("top", "integer", "How many places to show.", integer(3, 10), False, 10, "showing the top {top}")],
      ["Show the {league} standings.", "Who leads the {league}?"], "sports"),
    F("gym_class_schedule", "Classes at a gym on a weekday.", [
        P("weekday", "string", "Day of the week.", pick(["Monday", "Wednesday", "Friday", "Saturday"]),
          enum=["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]),
        P("kind", "string", "Kind of class.", pick(["spin", "pilates", "boxing"]), False, None, "for {kind}")],
      ["What classes are on {weekday}?", "Show the gym schedule for {weekday}."], "sports"),
]
BY_NAME = {f.name: f for f in FUNCTIONS}
CHATTER = ["Tell me a joke about penguins.", "What's your favourite colour?", "Write a haiku about autumn.",
           "Who painted the Mona Lisa?", "Explain what a black hole is in one sentence.",
           "Is it rude to whistle indoors?", "What does 'serendipity' mean?", "Recommend a good board game for four players."]
# Questions no function here answers, as most of BFCL's irrelevance entries are: facts, sums,
# advice. Each slot is filled from a pool, so a model cannot learn a list of refusals by heart.
GENERAL = [
    "What is the perimeter of a rectangle {a} cm long and {b} cm wide?",
    "Compute the sum of the first {a} odd numbers.",
    "What is {a} percent of {b}?",
    "Solve for x: {a}x + {b} = 0.",
    "How many seconds are there in {a} days?",
    "What is the square root of {b}?",
    "Recommend a novel set in {city}.",
    "In which country is {city}?",
    "What language do people mostly speak in {city}?",
    "Why is the sky {color} at sunset?",
    "Give me three tips for {topic}.",
    "What is the history of {topic}?",
    "How healthy is {food} compared with a salad?",
    "Suggest a wine that goes with {food}.",
    "Who is the most famous {genre} musician of all time?",
    "What does the word '{word}' mean in {lang}?",
    "How do you say 'good morning' in {lang}?",
    "What is the boiling point of water at {a} metres above sea level?",
    "How far is the Moon from the Earth?",
    "Name a famous scientist born in {city}.",
    "Can you explain how {topic} works to a child?",
    "What year did {person} most likely finish school if she is {a} now?",
]
WORDS = ["saudade", "hygge", "wabi-sabi", "fernweh", "ubuntu", "sobremesa"]


def general_question(rng: random.Random) -> str:
    """A question from GENERAL, its slots filled."""
    template = rng.choice(GENERAL)
    return template.format(a=rng.randint(2, 90), b=rng.randint(100, 900), city=rng.choice(CITIES),
                           color=rng.choice(COLORS), topic=rng.choice(TOPICS), food=rng.choice(FOODS),
                           genre=rng.choice(GENRES), word=rng.choice(WORDS), lang=rng.choice(LANGS), person=rng.choice(PEOPLE))


def call(rng: random.Random, function: Function) -> tuple[str, dict]:
    """A question for one call of ``function`` and the call's possible answer."""
    values = {p.name: p.draw(rng) for p in function.params}
    if "origin" in values and values.get("destination") == values["origin"]:
        values["destination"] = next(c for c in CITIES if c != values["origin"])
    question = rng.choice(function.asks)
    answer = {}
    for param in function.params:
        value = values[param.name]
        if param.required:
            answer[param.name] = [value]
        elif rng.random() < 0.4:  # the question states it
            question = question[:-1] + ", " + param.said.format(**{param.name: param.say(value)}) + question[-1]
            answer[param.name] = [value]
        else:  # left out, or its default given
            answer[param.name] = ["", param.default] if param.default is not None else [""]
    question = question.format(**{p.name: p.say(values[p.name]) for p in function.params})
    return question, {function.name: answer}


def entry(rng: random.Random, category: str) -> tuple[str, list[dict], list[dict]]:
    """(question, function docs, possible answer) of one task."""
    if category == "irrelevance":
        return irrelevant(rng)
    if category in ("simple_python", "parallel"):
        functions = [rng.choice(FUNCTIONS)]
    else:
        functions = rng.sample(FUNCTIONS, rng.randint(2, 4))
    if category in ("simple_python", "multiple"):
        question, answer = call(rng, functions[0])
        answers = [answer]
    elif category == "parallel":
        pairs = [call(rng, functions[0]) for _ in range(rng.randint(2, 3))]
        question = " ".join(q for q, _ in pairs)
        answers = [a for _, a in pairs]
    else:  # parallel_multiple: calls of different functions
        called = functions[:rng.randint(2, min(3, len(functions)))]
        pairs = [call(rng, f) for f in called]
        question = " Also, ".join(q if i == 0 else q[0].lower() + q[1:] for i, (q, _) in enumerate(pairs))
        answers = [a for _, a in pairs]
    docs = [f.doc() for f in functions]
    rng.shuffle(docs)
    return question, docs, answers


def irrelevant(rng: random.Random) -> tuple[str, list[dict], list[dict]]:
    """A request the shown functions cannot serve. As in BFCL's irrelevance entries, many are
    near misses: the request needs one function of a domain, and the others of that domain are
    shown (a model must read what each does, not match the topic). The rest are requests of
    another domain, or questions no function answers (facts, sums, advice: most of BFCL's), shown
    one or two functions of any domain, or chatter."""
    wanted = rng.choice(FUNCTIONS)
    draw = rng.random()
    if draw < 0.45:
        pool = [f for f in FUNCTIONS if f.domain == wanted.domain and f is not wanted]
    else:
        pool = [f for f in FUNCTIONS if f.domain != wanted.domain]
    shown_functions = rng.sample(pool, rng.randint(1, 3) if draw < 0.65 else rng.randint(1, 2))
    if draw < 0.65:
        question = call(rng, wanted)[0]
    elif draw < 0.92:
        question = general_question(rng)
    else:
        question = rng.choice(CHATTER)
    return question, [f.doc() for f in shown_functions], []


def build(count: int, rng: random.Random, avoid: set[str]) -> list[tuple[str, str, list[dict], list[dict]]]:
    mix = [c for c, n in MIX.items() for _ in range(n)]
    rows, seen = [], set(avoid)
    while len(rows) < count:
        category = mix[len(rows) % len(mix)]
        question, docs, answers = entry(rng, category)
        if question in seen or len({json.dumps(a, sort_keys=True) for a in answers}) < len(answers):
            continue
        seen.add(question)
        rows.append((category, question, docs, answers))
    return rows


def write(name: str, rows, counters: dict[str, int]) -> None:
    questions, answers = [], []
    for category, question, docs, truth in rows:
        counters[category] = counters.get(category, FIRST_ID) + 1
        entry_id = f"{category}_{counters[category] - 1}"
        questions.append({"id": entry_id, "question": [[{"role": "user", "content": question}]], "function": docs})
        if category != "irrelevance":  # BFCL's irrelevance entries have no possible answer
            answers.append({"id": entry_id, "ground_truth": truth})
    (OUT / "possible_answer").mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text("".join(json.dumps(q) + "\n" for q in questions))
    (OUT / "possible_answer" / name).write_text("".join(json.dumps(a) + "\n" for a in answers))


def main() -> None:
    rng = random.Random(SEED)
    eval_rows = build(N_EVAL, rng, set())
    train_rows = build(N_TRAIN, rng, {question for _, question, _, _ in eval_rows})
    counters: dict[str, int] = {}
    write("varied_eval.json", eval_rows, counters)
    write("varied_train.json", train_rows, counters)


if __name__ == "__main__":
    main()
