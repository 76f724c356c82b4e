"""The requests a user makes of each class, written against a live world.

A skill is one function ``skill(world) -> Request``: it picks what to ask about from the world's
current state, runs the calls that answer it (``World.run``, which fails on any error) and
words the request. It raises ``GenerationError`` where the state offers nothing to ask. A
request that needs a value only the user knows may also come vague, with the user's next message
giving the value (BFCL's miss_param: the right move on the vague one is to ask, not to guess).

Requests chain values: within one request (look a user's id up, then message them), and across
turns through ``world.memory`` (the order just placed, the ticket just opened, the file just
found), so a later turn's call needs what only an earlier result showed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from world import CITIES, COMPANIES, HANDLES, PEOPLE, TICKET_TITLES, TOPICS, WORDS, GenerationError, World

FS, MATH, MSG, POST, TICKET, TRADE, TRAVEL, CAR = ("GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI",
                                                  "TicketAPI", "TradingBot", "TravelAPI", "VehicleControlAPI")


@dataclass
class Request:
    text: str
    calls: list[str] = field(default_factory=list)
    vague: str | None = None  # the request without a value it needs
    clarify: str | None = None  # the user's next message, giving that value


@dataclass(frozen=True)
class Skill:
    fn: Callable[[World], Request]
    classes: tuple[str, ...]  # every class it needs in the task
    follows: str | None = None  # the memory key an earlier turn must have left ("order": the order placed)


SKILLS: list[Skill] = []


def skill(*classes: str, follows: str | None = None):
    def register(fn: Callable[[World], Request]) -> Callable[[World], Request]:
        SKILLS.append(Skill(fn, classes, follows))
        return fn
    return register


def quoted(items: list[str]) -> str:
    return ", ".join(f"'{item}'" for item in items)


# --------------------------------------------------------------------------- file system


def _fs(world: World):
    return world.instance(FS)


def _chain(directory) -> list:
    out = []
    while directory is not None:
        out.append(directory)
        directory = directory.parent
    return out[::-1]


def _directories(world: World) -> list:
    """Every directory of the tree, the home folder first."""
    out, stack = [], [_fs(world).root]
    while stack:
        directory = stack.pop(0)
        out.append(directory)
        stack += [item for item in directory.contents.values() if type(item).__name__ == "Directory"]
    return out


def where(world: World, directory) -> str:
    chain = _chain(directory)
    if len(chain) == 1:
        return f"in my home folder '{chain[0].name}'"
    if len(chain) == 2:
        return rwc(world, [f"in the '{chain[1].name}' folder", f"under '{chain[1].name}'", f"in '{chain[1].name}'"])
    return f"in '{chain[-1].name}' inside '{chain[-2].name}'"


def rwc(world: World, options: list[str]) -> str:
    return world.rng.choice(options)


def go_to(world: World, directory) -> list[str]:
    """The cd calls from the current folder to ``directory`` (up with '..', then down), run."""
    here, there = _chain(_fs(world)._current_dir), _chain(directory)
    common = 0
    while common < min(len(here), len(there)) and here[common] is there[common]:
        common += 1
    calls = [world.run("cd", folder="..")[0] for _ in here[common:]]
    calls += [world.run("cd", folder=d.name)[0] for d in there[common:]]
    return calls


def _pick_file(world: World, suffix: str = "", visible: bool = True):
    choices = [(d, name) for d in _directories(world) for name, item in d.contents.items()
               if type(item).__name__ == "File" and name.endswith(suffix) and not (visible and name.startswith("."))]
    if not choices:
        raise GenerationError("no such file")
    return world.rng.choice(choices)


def _remember_file(world: World, directory, name: str) -> None:
    world.memory["file"] = (directory, name)


@skill(FS)
def fs_read(world: World) -> Request:
    directory, name = _pick_file(world)
    calls = go_to(world, directory) + [world.run("cat", file_name=name)[0]]
    _remember_file(world, directory, name)
    place = where(world, directory)
    return Request(rwc(world, [f"Show me what '{name}' {place} says.", f"Open '{name}' {place} and show me its content.",
                               f"What's written in '{name}' {place}?"]), calls,
                   vague=rwc(world, ["Show me what that file says.", "Open the file I was working on and show me its content."]),
                   clarify=f"I mean '{name}' {place}.")


@skill(FS)
def fs_grep(world: World) -> Request:
    directory, name = _pick_file(world)
    content = directory.contents[name].content
    pattern = world.rng.choice([w for w in content.split() if w.isalpha() and len(w) > 3] or ["Note"])
    calls = go_to(world, directory) + [world.run("grep", file_name=name, pattern=pattern)[0]]
    _remember_file(world, directory, name)
    place = where(world, directory)
    return Request(rwc(world, [f"Which lines of '{name}' {place} mention '{pattern}'?",
                               f"Search '{name}' {place} for the word '{pattern}'."]), calls,
                   vague=f"Search '{name}' {place} for a word for me.", clarify=f"The word is '{pattern}'.")


@skill(FS)
def fs_tail(world: World) -> Request:
    directory, name = _pick_file(world)
    lines = world.rng.randint(1, 5)
    calls = go_to(world, directory) + [world.run("tail", file_name=name, lines=lines)[0]]
    _remember_file(world, directory, name)
    place = where(world, directory)
    plural = "line" if lines == 1 else f"{lines} lines"
    return Request(rwc(world, [f"Print the last {plural} of '{name}' {place}.", f"What are the final {plural} of '{name}' {place}?"]),
                   calls, vague=f"Print the last few lines of '{name}' {place}.", clarify=f"Just the last {plural}.")


@skill(FS)
def fs_count(world: World) -> Request:
    directory, name = _pick_file(world)
    mode, word = world.rng.choice([("l", "lines"), ("w", "words"), ("c", "characters")])
    calls = go_to(world, directory) + [world.run("wc", file_name=name, mode=mode)[0]]
    _remember_file(world, directory, name)
    return Request(f"How many {word} are there in '{name}' {where(world, directory)}?", calls)


@skill(FS)
def fs_sort(world: World) -> Request:
    directory, name = _pick_file(world)
    calls = go_to(world, directory) + [world.run("sort", file_name=name)[0]]
    _remember_file(world, directory, name)
    return Request(rwc(world, [f"Sort the lines of '{name}' {where(world, directory)} alphabetically.",
                               f"Give me '{name}' {where(world, directory)} with its lines sorted."]), calls)


@skill(FS)
def fs_compare(world: World) -> Request:
    pairs = [(d, a, b) for d in _directories(world) for a in d.contents for b in d.contents
             if a < b and not a.startswith(".") and not b.startswith(".")
             and type(d.contents[a]).__name__ == type(d.contents[b]).__name__ == "File"]
    if not pairs:
        raise GenerationError("no two files side by side")
    directory, a, b = world.rng.choice(pairs)
    calls = go_to(world, directory) + [world.run("diff", file_name1=a, file_name2=b)[0]]
    return Request(rwc(world, [f"Compare '{a}' with '{b}' {where(world, directory)}.",
                               f"What differs between '{a}' and '{b}' {where(world, directory)}?"]), calls)


@skill(FS)
def fs_file_away(world: World) -> Request:
    directory, name = _pick_file(world)
    folder = rwc(world, ["old", "done", "keep", "review", "shared", "q3", "final", "later"])
    if folder in directory.contents:
        raise GenerationError("folder exists")
    place = where(world, directory)
    calls = go_to(world, directory) + [world.run("mkdir", dir_name=folder)[0],
                                       world.run("mv", source=name, destination=folder)[0]]
    world.memory["folder"] = directory.contents[folder]
    return Request(rwc(world, [f"Make a folder called '{folder}' {place} and move '{name}' into it.",
                               f"Create '{folder}' {place}, then put '{name}' in there."]), calls,
                   vague=f"Make a new folder {place} and move '{name}' into it.", clarify=f"Call the folder '{folder}'.")


@skill(FS)
def fs_copy(world: World) -> Request:
    directory, name = _pick_file(world)
    stem, dot, ext = name.rpartition(".")
    copy_name = f"{stem}_copy.{ext}" if dot else f"{name}_copy"
    if copy_name in directory.contents:
        raise GenerationError("copy exists")
    calls = go_to(world, directory) + [world.run("cp", source=name, destination=copy_name)[0]]
    return Request(f"Make a copy of '{name}' {where(world, directory)} named '{copy_name}'.", calls)


@skill(FS)
def fs_rename(world: World) -> Request:
    directory, name = _pick_file(world)
    ext = name.rpartition(".")[2]
    new = f"{world.rng.choice(WORDS)}_{world.rng.choice(TOPICS)}.{ext}"
    if new in directory.contents:
        raise GenerationError("name taken")
    calls = go_to(world, directory) + [world.run("mv", source=name, destination=new)[0]]
    _remember_file(world, directory, new)
    return Request(rwc(world, [f"Rename '{name}' {where(world, directory)} to '{new}'.",
                               f"Change the name of '{name}' {where(world, directory)} to '{new}'."]), calls,
                   vague=f"Rename '{name}' {where(world, directory)} to something else.", clarify=f"Call it '{new}'.")


@skill(FS)
def fs_write_new(world: World) -> Request:
    directory = world.rng.choice(_directories(world))
    name = f"{world.rng.choice(['todo', 'summary', 'minutes', 'ideas', 'readme'])}_{world.rng.randint(2, 9)}.txt"
    if name in directory.contents:
        raise GenerationError("file exists")
    text = f"{world.rng.choice(['Call', 'Email', 'Ask', 'Remind'])} {world.rng.choice(PEOPLE)} about the {world.rng.choice(TOPICS)}"
    calls = go_to(world, directory) + [world.run("touch", file_name=name)[0], world.run("echo", content=text, file_name=name)[0]]
    _remember_file(world, directory, name)
    return Request(rwc(world, [f"Create a file '{name}' {where(world, directory)} and write '{text}' in it.",
                               f"Start a new file called '{name}' {where(world, directory)} containing '{text}'."]), calls,
                   vague=f"Create a file '{name}' {where(world, directory)} and write a note in it.",
                   clarify=f"The note is '{text}'.")


@skill(FS)
def fs_remove(world: World) -> Request:
    directory, name = _pick_file(world)
    calls = go_to(world, directory) + [world.run("rm", file_name=name)[0]]
    return Request(rwc(world, [f"Delete '{name}' {where(world, directory)}.", f"Remove '{name}' {where(world, directory)}, I don't need it."]),
                   calls, vague=f"Delete one of the files {where(world, directory)}.", clarify=f"It's '{name}'.")


@skill(FS)
def fs_list(world: World) -> Request:
    directory = world.rng.choice(_directories(world))
    hidden = world.rng.random() < 0.4
    calls = go_to(world, directory) + [world.run("ls", a=True)[0] if hidden else world.run("ls")[0]]
    extra = ", hidden files included" if hidden else ""
    return Request(rwc(world, [f"List what is {where(world, directory)}{extra}.", f"What files are {where(world, directory)}{extra}?"]), calls)


@skill(FS)
def fs_find_then_open(world: World) -> Request:
    """Find a file by part of its name from the current folder, then read it: the folder to go to
    is only known from find's answer."""
    here = _fs(world)._current_dir
    below = [(d, n) for d in _directories(world) if any(c is here for c in _chain(d))
             for n, item in d.contents.items() if type(item).__name__ == "File"]
    if not below:
        raise GenerationError("nothing below")
    directory, name = world.rng.choice(below)
    part = name.split("_")[0] if "_" in name else name.split(".")[0]
    text, found = world.run("find", path=".", name=part)
    if len(found["matches"]) != 1:
        raise GenerationError("ambiguous")
    calls = [text] + go_to(world, directory) + [world.run("cat", file_name=name)[0]]
    _remember_file(world, directory, name)
    return Request(rwc(world, [f"There's a file with '{part}' in its name somewhere in this folder. Find it and show me what it says.",
                               f"Look for the file whose name contains '{part}' and open it."]), calls)


@skill(FS)
def fs_where_am_i(world: World) -> Request:
    return Request(rwc(world, ["Which folder am I in right now?", "Print the path of the current folder."]), [world.run("pwd")[0]])


@skill(FS)
def fs_disk_usage(world: World) -> Request:
    directory = world.rng.choice(_directories(world))
    calls = go_to(world, directory) + [world.run("du", human_readable=True)[0]]
    return Request(f"How much space do the files {where(world, directory)} take? Make it human readable.", calls)


@skill(FS, follows="file")
def fs_followup_lines(world: World) -> Request:
    """A follow-up on the file an earlier turn worked on: 'that file'."""
    if "file" not in world.memory:
        raise GenerationError("no file yet")
    directory, name = world.memory["file"]
    if name not in directory.contents:
        raise GenerationError("file gone")
    lines = world.rng.randint(2, 4)
    calls = go_to(world, directory) + [world.run("tail", file_name=name, lines=lines)[0]]
    return Request(rwc(world, [f"Now show me the last {lines} lines of that same file.", f"And its last {lines} lines?"]), calls)


# --------------------------------------------------------------------------- math, alone and on files


def _numbers(world: World, count: int) -> list[float]:
    return [float(world.rng.randint(2, 400)) for _ in range(count)]


STATISTICS = [("mean", "the average"), ("sum_values", "the total"), ("max_value", "the largest"),
              ("min_value", "the smallest"), ("standard_deviation", "the standard deviation")]


@skill(MATH)
def math_statistic(world: World) -> Request:
    values = _numbers(world, world.rng.randint(3, 6))
    name, words = world.rng.choice(STATISTICS)
    shown = ", ".join(f"{v:g}" for v in values)
    return Request(f"What is {words} of {shown}?", [world.run(name, numbers=values)[0]])


@skill(MATH)
def math_chain(world: World) -> Request:
    """Two operations, the second on the first one's result."""
    a, b, c = (float(world.rng.randint(2, 60)) for _ in range(3))
    first = world.rng.choice([("add", "Add {a:g} and {b:g}"), ("multiply", "Multiply {a:g} by {b:g}"),
                              ("subtract", "Subtract {b:g} from {a:g}")])
    text1, result = world.run(first[0], a=a, b=b)
    value = result["result"]
    second = world.rng.choice([("divide", "divide the result by {c:g}"), ("power", "raise the result to the power of 2"),
                               ("round_number", "round the result to 1 decimal place"),
                               ("square_root", "take the square root of the result, 3 digits of precision")])
    if second[0] == "divide":
        text2 = world.run("divide", a=value, b=c)[0]
    elif second[0] == "power":
        text2 = world.run("power", base=value, exponent=2.0)[0]
    elif second[0] == "round_number":
        text2 = world.run("round_number", number=value, decimal_places=1)[0]
    else:
        if value < 0:
            raise GenerationError("negative root")
        text2 = world.run("square_root", number=value, precision=3)[0]
    return Request(f"{first[1].format(a=a, b=b)}, then {second[1].format(c=c)}.", [text1, text2])


@skill(MATH)
def math_percentage(world: World) -> Request:
    part, whole = float(world.rng.randint(1, 90)), float(world.rng.randint(100, 400))
    return Request(f"What percentage of {whole:g} is {part:g}?", [world.run("percentage", part=part, whole=whole)[0]])


@skill(MATH)
def math_convert(world: World) -> Request:
    value = float(world.rng.randint(2, 300))
    unit_in, unit_out, words = world.rng.choice([("km", "miles", "kilometres in miles"), ("lb", "kg", "pounds in kilograms"),
                                                 ("in", "cm", "inches in centimetres"), ("m", "ft", "metres in feet")])
    return Request(f"How much is {value:g} {words}?", [world.run("imperial_si_conversion", value=value, unit_in=unit_in, unit_out=unit_out)[0]])


@skill(FS, MATH)
def fs_math_numbers(world: World) -> Request:
    """Read a file of numbers, then a statistic of them: the values come from the file."""
    candidates = [(d, n) for d in _directories(world) for n, item in d.contents.items()
                  if type(item).__name__ == "File" and item.content and all(x.isdigit() for x in item.content.split())]
    if not candidates:
        raise GenerationError("no numbers file")
    directory, name = world.rng.choice(candidates)
    calls = go_to(world, directory) + [world.run("cat", file_name=name)[0]]
    values = [float(x) for x in directory.contents[name].content.split()]
    fn, words = world.rng.choice(STATISTICS)
    calls.append(world.run(fn, numbers=values)[0])
    return Request(f"'{name}' {where(world, directory)} holds a list of numbers. What is {words} of them?", calls)


# --------------------------------------------------------------------------- messages


def _message_login(world: World) -> tuple[str, list[str]]:
    api = world.instance(MSG)
    if api.current_user:
        return "", []
    me = world.memory["hints"][MSG]["me"]
    text, found = world.run("get_user_id", user=me)
    return f"I'm {me}, log me in first. ", [text, world.run("message_login", user_id=found["user_id"])[0]]


@skill(MSG)
def msg_send(world: World) -> Request:
    api = world.instance(MSG)
    me = world.memory["hints"][MSG]["me"]
    person = world.rng.choice([p for p in api.user_map if p != me])
    note = f"{world.rng.choice(['Reminder', 'Heads up', 'FYI', 'Quick note'])}: the {world.rng.choice(TOPICS)} review is {world.rng.choice(['moved to Friday', 'at 3pm', 'cancelled', 'done'])}"
    prefix, calls = _message_login(world)
    text, found = world.run("get_user_id", user=person)
    calls += [text, world.run("send_message", receiver_id=found["user_id"], message=note)[0]]
    world.memory["message"] = note
    return Request(prefix + rwc(world, [f"Send {person} a message saying '{note}'.", f"Message {person}: '{note}'."]), calls,
                   vague=prefix + f"Send a message saying '{note}' to my colleague.", clarify=f"The colleague is {person}.")


@skill(MSG, follows="message")
def msg_send_again(world: World) -> Request:
    if "message" not in world.memory:
        raise GenerationError("nothing sent yet")
    api = world.instance(MSG)
    person = world.rng.choice(list(api.user_map))
    text, found = world.run("get_user_id", user=person)
    calls = [text, world.run("send_message", receiver_id=found["user_id"], message=world.memory["message"])[0]]
    return Request(f"Send the same message to {person} too.", calls)


@skill(MSG)
def msg_view_sent(world: World) -> Request:
    prefix, calls = _message_login(world)
    return Request(prefix + rwc(world, ["Show me the messages I have sent.", "List my sent messages."]),
                   calls + [world.run("view_messages_sent")[0]])


@skill(MSG)
def msg_search(world: World) -> Request:
    prefix, calls = _message_login(world)
    keyword = world.rng.choice(TOPICS)
    return Request(prefix + f"Find my messages that mention '{keyword}'.", calls + [world.run("search_messages", keyword=keyword)[0]],
                   vague=prefix + "Find my messages about a topic.", clarify=f"The topic is '{keyword}'.")


@skill(MSG)
def msg_delete_latest(world: World) -> Request:
    api = world.instance(MSG)
    names = {uid: name for name, uid in api.user_map.items()}
    receivers = [names[next(iter(entry))] for entry in api.inbox if next(iter(entry)) in names]
    if not receivers:
        raise GenerationError("nothing to delete")
    person = world.rng.choice(receivers)
    prefix, calls = _message_login(world)
    text, found = world.run("get_user_id", user=person)
    calls += [text, world.run("delete_message", receiver_id=found["user_id"])[0]]
    return Request(prefix + f"Delete the latest message I sent to {person}.", calls)


@skill(MSG)
def msg_add_contact(world: World) -> Request:
    api = world.instance(MSG)
    person = world.rng.choice([p for p in PEOPLE if p not in api.user_map])
    return Request(rwc(world, [f"Add {person} to my contacts.", f"Please add a contact named {person}."]),
                   [world.run("add_contact", user_name=person)[0]],
                   vague="Add a new contact for me.", clarify=f"The name is {person}.")


@skill(MSG)
def msg_stats(world: World) -> Request:
    prefix, calls = _message_login(world)
    return Request(prefix + "How many messages have I sent, and to how many people?", calls + [world.run("get_message_stats")[0]])


@skill(MSG)
def msg_list_users(world: World) -> Request:
    return Request(rwc(world, ["Who is in the workspace?", "List all users I can message."]), [world.run("list_users")[0]])


@skill(FS, MSG)
def fs_msg_share_line(world: World) -> Request:
    """Send someone a line read from a file: the message is only known from the file."""
    directory, name = _pick_file(world)
    me = world.memory["hints"][MSG]["me"]
    person = world.rng.choice([p for p in world.instance(MSG).user_map if p != me])
    calls = go_to(world, directory)
    text, result = world.run("tail", file_name=name, lines=1)
    calls.append(text)
    prefix, login = _message_login(world)
    found_text, found = world.run("get_user_id", user=person)
    calls += login + [found_text, world.run("send_message", receiver_id=found["user_id"], message=result["last_lines"])[0]]
    _remember_file(world, directory, name)
    return Request(prefix + f"Send {person} the last line of '{name}' {where(world, directory)}.", calls,
                   vague=prefix + f"Send the last line of '{name}' {where(world, directory)} to a teammate.",
                   clarify=f"Send it to {person}.")


# --------------------------------------------------------------------------- posting


def _post_login(world: World) -> tuple[str, list[str]]:
    api = world.instance(POST)
    if api.authenticated:
        return "", []
    return (f"My username is {api.username} and my password is {api.password}. ",
            [world.run("authenticate_twitter", username=api.username, password=api.password)[0]])


@skill(POST)
def post_tweet(world: World) -> Request:
    topic = world.rng.choice(TOPICS)
    content = f"{world.rng.choice(['Just wrapped up', 'Excited about', 'Working late on', 'Proud of'])} the {topic} {world.rng.choice(['project', 'plan', 'release'])}"
    prefix, calls = _post_login(world)
    mention = world.rng.random() < 0.4
    others = [h for h in HANDLES if h != world.instance(POST).username]
    handle = world.rng.choice(others)
    if mention:
        text, tweet = world.run("post_tweet", content=content, tags=[f"#{topic}"], mentions=[f"@{handle}"])
        ask = f"Post '{content}' with the tag #{topic} and mention @{handle}."
    else:
        text, tweet = world.run("post_tweet", content=content, tags=[f"#{topic}"])
        ask = rwc(world, [f"Post a tweet saying '{content}' tagged #{topic}.", f"Tweet '{content}' with #{topic}."])
    world.memory["tweet"] = tweet["id"]
    return Request(prefix + ask, calls + [text], vague=prefix + f"Post a tweet tagged #{topic}." if not mention else None,
                   clarify=f"Write '{content}'." if not mention else None)


@skill(POST, follows="tweet")
def post_mention_followup(world: World) -> Request:
    if "tweet" not in world.memory:
        raise GenerationError("no tweet yet")
    handles = world.rng.sample([h for h in HANDLES if h != world.instance(POST).username], 2)
    return Request(f"Also mention {handles[0]} and {handles[1]} in that tweet.",
                   [world.run("mention", tweet_id=world.memory["tweet"], mentioned_usernames=handles)[0]])


@skill(POST)
def post_comment_found(world: World) -> Request:
    """Comment on the tweet a search finds: its id is only known from the search."""
    api = world.instance(POST)
    by_topic: dict[str, list[int]] = {}
    for tweet in api.tweets.values():
        for word in tweet["content"].split()[-2:]:
            by_topic.setdefault(word, []).append(tweet["id"])
    unique = [(w, ids[0]) for w, ids in by_topic.items() if len(ids) == 1]
    if not unique:
        raise GenerationError("no unique word")
    word, tweet_id = world.rng.choice(unique)
    prefix, calls = _post_login(world)
    note = world.rng.choice(["Great point!", "Count me in.", "Thanks for sharing.", "Let's discuss tomorrow."])
    calls += [world.run("search_tweets", keyword=word)[0], world.run("comment", tweet_id=tweet_id, comment_content=note)[0]]
    return Request(prefix + f"Find the tweet that mentions '{word}' and reply to it with '{note}'.", calls,
                   vague=prefix + f"Find the tweet that mentions '{word}' and reply to it.", clarify=f"Reply '{note}'.")


@skill(POST)
def post_retweet_user(world: World) -> Request:
    api = world.instance(POST)
    authors = sorted({t["username"] for t in api.tweets.values() if t["username"] != api.username})
    if not authors:
        raise GenerationError("no other authors")
    author = world.rng.choice(authors)
    theirs = [t for t in api.tweets.values() if t["username"] == author]
    tweet = theirs[-1]
    prefix, calls = _post_login(world)
    calls += [world.run("get_user_tweets", username=author)[0], world.run("retweet", tweet_id=tweet["id"])[0]]
    return Request(prefix + f"Retweet the most recent post by {author}.", calls)


@skill(POST)
def post_follow(world: World) -> Request:
    api = world.instance(POST)
    prefix, calls = _post_login(world)
    if world.rng.random() < 0.5 and api.following_list:
        handle = world.rng.choice(api.following_list)
        return Request(prefix + f"Unfollow {handle}.", calls + [world.run("unfollow_user", username_to_unfollow=handle)[0]])
    handle = world.rng.choice([h for h in HANDLES if h not in api.following_list and h != api.username])
    return Request(prefix + rwc(world, [f"Follow {handle}.", f"Start following {handle} for me."]),
                   calls + [world.run("follow_user", username_to_follow=handle)[0]],
                   vague=prefix + "Follow someone for me.", clarify=f"The account is {handle}.")


@skill(POST)
def post_stats(world: World) -> Request:
    api = world.instance(POST)
    handle = world.rng.choice(sorted({t["username"] for t in api.tweets.values()} | {api.username}))
    return Request(f"How many tweets has {handle} posted?", [world.run("get_user_stats", username=handle)[0]])


@skill(POST)
def post_following(world: World) -> Request:
    prefix, calls = _post_login(world)
    return Request(prefix + "Who am I following?", calls + [world.run("list_all_following")[0]])


@skill(FS, POST)
def fs_post_line(world: World) -> Request:
    """Tweet the first line of a file."""
    directory, name = _pick_file(world)
    calls = go_to(world, directory)
    text, result = world.run("cat", file_name=name)
    first_line = result["file_content"].splitlines()[0]
    prefix, login = _post_login(world)
    post_text, tweet = world.run("post_tweet", content=first_line)
    world.memory["tweet"] = tweet["id"]
    return Request(prefix + f"Tweet the first line of '{name}' {where(world, directory)}.", calls + [text] + login + [post_text])


# --------------------------------------------------------------------------- tickets


def _ticket_login(world: World) -> tuple[str, list[str]]:
    api = world.instance(TICKET)
    if api.current_user:
        return "", []
    user = world.memory["hints"][TICKET]["user"]
    password = f"{world.rng.choice(WORDS)}{world.rng.randint(10, 99)}"
    return (f"Log me in to the ticket system as {user} with password {password}. ",
            [world.run("ticket_login", username=user, password=password)[0]])


@skill(TICKET)
def ticket_create(world: World) -> Request:
    title = world.rng.choice(TICKET_TITLES)
    description = f"{world.rng.choice(['Started', 'Seen', 'Happening'])} {world.rng.choice(['this morning', 'since Monday', 'after the update'])}"
    priority = world.rng.randint(1, 5)
    prefix, calls = _ticket_login(world)
    text, ticket = world.run("create_ticket", title=title, description=description, priority=priority)
    world.memory["ticket"] = ticket["id"]
    return Request(prefix + rwc(world, [f"Open a ticket titled '{title}' with priority {priority}, description '{description}'.",
                                        f"File a priority {priority} ticket '{title}': '{description}'."]), calls + [text],
                   vague=prefix + f"Open a ticket titled '{title}', description '{description}'.",
                   clarify=f"Give it priority {priority}.")


@skill(TICKET, follows="ticket")
def ticket_followup(world: World) -> Request:
    if "ticket" not in world.memory:
        raise GenerationError("no ticket yet")
    ticket_id = world.memory["ticket"]
    choice = world.rng.randrange(3)
    if choice == 0:
        return Request("Close that ticket now.", [world.run("close_ticket", ticket_id=ticket_id)[0]])
    if choice == 1:
        note = world.rng.choice(["Replaced the cable", "Restarted the service", "Updated the driver"])
        return Request(f"Mark it resolved with the note '{note}'.", [world.run("resolve_ticket", ticket_id=ticket_id, resolution=note)[0]])
    priority = world.rng.randint(1, 5)
    return Request(f"Change that ticket's priority to {priority}.",
                   [world.run("edit_ticket", ticket_id=ticket_id, updates={"priority": priority})[0]])


@skill(TICKET)
def ticket_show(world: World) -> Request:
    api = world.instance(TICKET)
    if not api.ticket_queue:
        raise GenerationError("no tickets")
    ticket = world.rng.choice(api.ticket_queue)
    world.memory["ticket"] = ticket["id"]
    return Request(rwc(world, [f"Show me ticket {ticket['id']}.", f"What's the status of ticket #{ticket['id']}?"]),
                   [world.run("get_ticket", ticket_id=ticket["id"])[0]],
                   vague="What's the status of my ticket?", clarify=f"It's ticket {ticket['id']}.")


@skill(TICKET)
def ticket_close_listed(world: World) -> Request:
    """List my open tickets, then close the one about something: its id comes from the list."""
    api = world.instance(TICKET)
    prefix, calls = _ticket_login(world)
    mine = [t for t in api.ticket_queue if t["created_by"] == api.current_user and t["status"] == "Open"]
    if not mine:
        raise GenerationError("no open tickets")
    ticket = world.rng.choice(mine)
    calls += [world.run("get_user_tickets", status="Open")[0], world.run("close_ticket", ticket_id=ticket["id"])[0]]
    return Request(prefix + f"Look through my open tickets and close the one titled '{ticket['title']}'.", calls)


@skill(TICKET)
def ticket_logout(world: World) -> Request:
    if not world.instance(TICKET).current_user:
        raise GenerationError("not logged in")
    return Request("Log me out of the ticket system.", [world.run("logout")[0]])


@skill(FS, TICKET)
def fs_ticket_report(world: World) -> Request:
    """A ticket whose description is a file's content."""
    directory, name = _pick_file(world)
    calls = go_to(world, directory)
    text, result = world.run("cat", file_name=name)
    prefix, login = _ticket_login(world)
    title = f"Review {name}"
    ticket_text, ticket = world.run("create_ticket", title=title, description=result["file_content"])
    world.memory["ticket"] = ticket["id"]
    return Request(prefix + f"Open a ticket titled '{title}' whose description is the content of '{name}' {where(world, directory)}.",
                   calls + [text] + login + [ticket_text])


# --------------------------------------------------------------------------- trading


def _trade_login(world: World) -> tuple[str, list[str]]:
    if world.instance(TRADE).authenticated:
        return "", []
    user = world.rng.choice(PEOPLE).lower()
    password = f"{world.rng.choice(WORDS)}#{world.rng.randint(10, 99)}"
    return (f"Log me in first (user {user}, password {password}). ",
            [world.run("trading_login", username=user, password=password)[0]])


@skill(TRADE)
def trade_quote(world: World) -> Request:
    company = world.rng.choice(list(COMPANIES))
    text, found = world.run("get_symbol_by_name", name=company)
    calls = [text, world.run("get_stock_info", symbol=found["symbol"])[0]]
    world.memory["stock"] = (company, found["symbol"])
    return Request(rwc(world, [f"How is {company}'s stock doing?", f"Get me the latest stock data for {company}."]), calls,
                   vague="How is that company's stock doing?", clarify=f"I mean {company}.")


@skill(TRADE)
def trade_buy(world: World) -> Request:
    """Buy at the current price: the price comes from the stock's data."""
    api = world.instance(TRADE)
    company = world.rng.choice(list(COMPANIES))
    symbol = COMPANIES[company]
    price = api.stocks[symbol]["price"]
    affordable = int(api.account_info["balance"] // price)
    if affordable < 1:
        raise GenerationError("too poor")
    amount = world.rng.randint(1, min(affordable, 50))
    prefix, calls = _trade_login(world)
    calls += [world.run("get_symbol_by_name", name=company)[0], world.run("get_stock_info", symbol=symbol)[0]]
    text, order = world.run("place_order", order_type="Buy", symbol=symbol, price=price, amount=amount)
    world.memory["order"] = order["order_id"]
    return Request(prefix + rwc(world, [f"Buy {amount} shares of {company} at the current price.",
                                        f"Place an order for {amount} {company} shares at today's price."]), calls + [text],
                   vague=prefix + f"Buy some {company} shares at the current price.", clarify=f"{amount} shares.")


@skill(TRADE, follows="order")
def trade_order_followup(world: World) -> Request:
    if "order" not in world.memory:
        raise GenerationError("no order yet")
    order_id = world.memory["order"]
    if world.rng.random() < 0.5:
        return Request("Show me the details of that order.", [world.run("get_order_details", order_id=order_id)[0]])
    return Request(rwc(world, ["Actually, cancel that order.", "Cancel the order you just placed."]),
                   [world.run("cancel_order", order_id=order_id)[0]])


@skill(TRADE)
def trade_watch(world: World) -> Request:
    api = world.instance(TRADE)
    prefix, calls = _trade_login(world)
    if api.watch_list and world.rng.random() < 0.4:
        symbol = world.rng.choice(api.watch_list)
        return Request(prefix + f"Take {symbol} off my watchlist.", calls + [world.run("remove_stock_from_watchlist", symbol=symbol)[0]])
    company = world.rng.choice([c for c, s in COMPANIES.items() if s not in api.watch_list])
    text, found = world.run("get_symbol_by_name", name=company)
    return Request(prefix + f"Add {company} to my watchlist.", calls + [text, world.run("add_to_watchlist", stock=found["symbol"])[0]])


@skill(TRADE)
def trade_show_watchlist(world: World) -> Request:
    prefix, calls = _trade_login(world)
    return Request(prefix + "What's on my watchlist?", calls + [world.run("get_watchlist")[0]])


@skill(TRADE)
def trade_fund(world: World) -> Request:
    amount = float(world.rng.randint(2, 40) * 250)
    prefix, calls = _trade_login(world)
    return Request(prefix + f"Deposit ${amount:,.0f} into my trading account.", calls + [world.run("fund_account", amount=amount)[0]],
                   vague=prefix + "Put some money into my trading account.", clarify=f"${amount:,.0f}.")


@skill(TRADE)
def trade_sector_filter(world: World) -> Request:
    low = float(world.rng.randint(1, 4) * 100)
    high = low + float(world.rng.randint(2, 6) * 100)
    text, found = world.run("get_available_stocks", sector="Technology")
    calls = [text, world.run("filter_stocks_by_price", stocks=found["stock_list"], min_price=low, max_price=high)[0]]
    return Request(f"Which technology stocks trade between ${low:.0f} and ${high:.0f}?", calls)


@skill(TRADE)
def trade_account(world: World) -> Request:
    prefix, calls = _trade_login(world)
    choice = world.rng.randrange(2)
    if choice == 0:
        return Request(prefix + "What's my account balance?", calls + [world.run("get_account_info")[0]])
    return Request(prefix + "List the ids of all my orders.", calls + [world.run("get_order_history")[0]])


@skill(TRADE, MSG)
def trade_msg_price(world: World) -> Request:
    """Tell a colleague a stock's price: the message carries a value from the stock's data."""
    company = world.rng.choice(list(COMPANIES))
    text, found = world.run("get_symbol_by_name", name=company)
    info_text, info = world.run("get_stock_info", symbol=found["symbol"])
    person = world.rng.choice(list(world.instance(MSG).user_map))
    prefix, login = _message_login(world)
    id_text, user = world.run("get_user_id", user=person)
    note = f"{found['symbol']} is at {info['price']}"
    calls = [text, info_text] + login + [id_text, world.run("send_message", receiver_id=user["user_id"], message=note)[0]]
    return Request(prefix + f"Look up {company}'s current price and message {person} '<symbol> is at <price>'.", calls)


# --------------------------------------------------------------------------- travel


def _travel_token(world: World) -> tuple[str, list[str], str]:
    """The access token the travel calls need: from the user, or from logging in."""
    api = world.instance(TRAVEL)
    if api.access_token and world.memory.get("token_said"):
        return "", [], api.access_token
    if api.access_token:
        world.memory["token_said"] = True
        return f"My travel access token is {api.access_token}. ", [], api.access_token
    client = world.memory["hints"][TRAVEL]["client"]
    text, result = world.run("authenticate_travel", client_id=client["client_id"], client_secret=client["client_secret"],
                             refresh_token=client["refresh_token"], grant_type="read_write",
                             user_first_name=api.user_first_name, user_last_name=api.user_last_name)
    world.memory["token_said"] = True
    return (f"Log me in to the travel service first: client id {client['client_id']}, secret {client['client_secret']}, "
            f"refresh token {client['refresh_token']}, grant type read_write, for {api.user_first_name} {api.user_last_name}. ",
            [text], result["access_token"])


def _route(world: World) -> tuple[str, str]:
    from fcenv.backends.travel_booking import _CITY_AIRPORTS, _ROUTE_FARES
    pairs = [(a, b) for a in CITIES for b in CITIES if (_CITY_AIRPORTS[a], _CITY_AIRPORTS[b]) in _ROUTE_FARES]
    return world.rng.choice(pairs)


def _date(world: World) -> str:
    return f"2025-{world.rng.randint(1, 12):02d}-{world.rng.randint(1, 28):02d}"


@skill(TRAVEL)
def travel_airport(world: World) -> Request:
    city = world.rng.choice(CITIES)
    return Request(f"Which airport is closest to {city}?", [world.run("get_nearest_airport_by_city", location=city)[0]])


@skill(TRAVEL)
def travel_cost(world: World) -> Request:
    a, b = _route(world)
    date, travel_class = _date(world), world.rng.choice(["economy", "business", "first"])
    t1, from_ = world.run("get_nearest_airport_by_city", location=a)
    t2, to = world.run("get_nearest_airport_by_city", location=b)
    calls = [t1, t2, world.run("get_flight_cost", travel_from=from_["nearest_airport"], travel_to=to["nearest_airport"],
                               travel_date=date, travel_class=travel_class)[0]]
    world.memory["trip"] = (from_["nearest_airport"], to["nearest_airport"], date, travel_class, a, b)
    return Request(f"How much is a {travel_class} flight from {a} to {b} on {date}?", calls,
                   vague=f"How much is a flight from {a} to {b} on {date}?", clarify=f"In {travel_class} class.")


@skill(TRAVEL)
def travel_book(world: World) -> Request:
    """Book a flight on the card with given last digits: the card's id comes from the card list."""
    api = world.instance(TRAVEL)
    a, b = _route(world)
    date, travel_class = _date(world), world.rng.choice(["economy", "business"])
    if "trip" in world.memory and world.rng.random() < 0.6:
        from_code, to_code, date, travel_class, a, b = world.memory["trip"]
        what = "that flight"
    else:
        from fcenv.backends.travel_booking import _CITY_AIRPORTS
        from_code, to_code = _CITY_AIRPORTS[a], _CITY_AIRPORTS[b]
        what = f"a {travel_class} flight from {from_code} to {to_code} on {date}"
    cost = api._flight_cost(from_code, to_code, date, travel_class)
    cards = [cid for cid, card in api.credit_card_list.items() if card["balance"] >= cost]
    if not cards or api.budget_limit is not None:
        raise GenerationError("no card can pay")
    card_id = world.rng.choice(cards)
    digits = api.credit_card_list[card_id]["card_number"][-4:]
    if sum(c["card_number"].endswith(digits) for c in api.credit_card_list.values()) != 1:
        raise GenerationError("ambiguous card")
    prefix, calls, token = _travel_token(world)
    calls += [world.run("get_all_credit_cards")[0]]
    text, booking = world.run("book_flight", access_token=token, card_id=card_id, travel_date=date, travel_from=from_code,
                              travel_to=to_code, travel_class=travel_class)
    world.memory["booking"] = (booking["booking_id"], card_id)
    return Request(prefix + f"Book {what} with my card ending in {digits}.", calls + [text],
                   vague=prefix + f"Book {what} with one of my cards.", clarify=f"Use the card ending in {digits}.")


@skill(TRAVEL, follows="booking")
def travel_booking_followup(world: World) -> Request:
    if "booking" not in world.memory:
        raise GenerationError("no booking yet")
    booking_id, card_id = world.memory["booking"]
    prefix, calls, token = _travel_token(world)
    choice = world.rng.randrange(4)
    if choice == 0:
        del world.memory["booking"]
        return Request(prefix + "Cancel that booking.", calls + [world.run("cancel_booking", access_token=token, booking_id=booking_id)[0]])
    if choice == 1:
        return Request(prefix + "Get me the invoice for that booking.",
                       calls + [world.run("retrieve_invoice", access_token=token, booking_id=booking_id)[0]])
    if choice == 2:
        cost = float(world.rng.choice([30, 45, 60, 80]))
        kind = world.rng.choice(["comprehensive", "cancellation", "baggage"])
        return Request(prefix + f"Buy {kind} insurance for ${cost:.0f} on that booking, paid with the same card.",
                       calls + [world.run("purchase_insurance", access_token=token, insurance_type=kind, booking_id=booking_id,
                                          insurance_cost=cost, card_id=card_id)[0]])
    note = world.rng.choice(["I need a vegetarian meal.", "Can I bring a bike?", "Please add a wheelchair request."])
    return Request(f"Tell customer support about that booking: '{note}'",
                   [world.run("contact_customer_support", booking_id=booking_id, message=note)[0]])


@skill(TRAVEL)
def travel_exchange(world: World) -> Request:
    value = float(world.rng.randint(2, 90) * 50)
    currency = world.rng.choice(["EUR", "GBP", "JPY", "CAD", "AUD", "INR"])
    if world.rng.random() < 0.5:
        return Request(f"How much is {value:g} USD in {currency}?",
                       [world.run("compute_exchange_rate", base_currency="USD", target_currency=currency, value=value)[0]])
    return Request(f"Convert {value:g} {currency} to US dollars.",
                   [world.run("compute_exchange_rate", base_currency=currency, target_currency="USD", value=value)[0]])


@skill(TRAVEL)
def travel_budget(world: World) -> Request:
    limit = float(world.rng.randint(4, 40) * 100)
    prefix, calls, token = _travel_token(world)
    return Request(prefix + f"Set my travel budget limit to ${limit:.0f}.",
                   calls + [world.run("set_budget_limit", access_token=token, budget_limit=limit)[0]],
                   vague=prefix + "Set a travel budget limit for me.", clarify=f"${limit:.0f}.")


@skill(TRAVEL)
def travel_balance(world: World) -> Request:
    api = world.instance(TRAVEL)
    if not api.credit_card_list:
        raise GenerationError("no cards")
    card_id = world.rng.choice(list(api.credit_card_list))
    prefix, calls, token = _travel_token(world)
    return Request(prefix + f"What's the balance on card {card_id}?",
                   calls + [world.run("get_credit_card_balance", access_token=token, card_id=card_id)[0]])


@skill(TRAVEL, MSG, follows="booking")
def travel_msg_booking(world: World) -> Request:
    """Tell a colleague a booking's id: the id comes from an earlier booking."""
    if "booking" not in world.memory:
        raise GenerationError("no booking yet")
    person = world.rng.choice(list(world.instance(MSG).user_map))
    prefix, calls = _message_login(world)
    text, user = world.run("get_user_id", user=person)
    note = f"My booking id is {world.memory['booking'][0]}"
    return Request(prefix + f"Message {person} my booking id, as 'My booking id is <id>'.",
                   calls + [text, world.run("send_message", receiver_id=user["user_id"], message=note)[0]])


# --------------------------------------------------------------------------- vehicle


@skill(CAR)
def car_start(world: World) -> Request:
    """Starting takes locked doors and a pressed brake; the user only asks to start."""
    api = world.instance(CAR)
    if api.engine_state == "running" or api.fuelLevel <= 0:
        raise GenerationError("running already")
    calls = []
    if api.remainingUnlockedDoors:
        calls.append(world.run("lockDoors", unlock=False, door=["driver", "passenger", "rear_left", "rear_right"])[0])
    calls += [world.run("pressBrakePedal", pedalPosition=1.0)[0], world.run("startEngine", ignitionMode="START")[0]]
    return Request(rwc(world, ["Start the engine. Lock all the doors and press the brake fully first.",
                               "Get the car running: lock every door, hold the brake down fully, then start it."]), calls)


@skill(CAR)
def car_fuel(world: World) -> Request:
    api = world.instance(CAR)
    room = 50 - api.fuelLevel
    if room < 2:
        raise GenerationError("tank full")
    if world.rng.random() < 0.5:
        gallons = float(world.rng.randint(1, int(room)))
        return Request(f"Add {gallons:g} gallons of fuel.", [world.run("fillFuelTank", fuelAmount=gallons)[0]],
                       vague="Put some fuel in the tank.", clarify=f"{gallons:g} gallons.")
    liters = float(world.rng.randint(2, int(room * 3.7)))
    text, result = world.run("liter_to_gallon", liter=liters)
    if api.fuelLevel + result["gallon"] > 50:
        raise GenerationError("too much")
    return Request(f"Add {liters:g} liters of fuel (the tank takes gallons, so convert first).",
                   [text, world.run("fillFuelTank", fuelAmount=result["gallon"])[0]])


@skill(CAR)
def car_climate(world: World) -> Request:
    unit = world.rng.choice(["celsius", "fahrenheit"])
    temperature = float(world.rng.randint(18, 26) if unit == "celsius" else world.rng.randint(64, 78))
    fan = world.rng.choice([20, 40, 60, 80])
    return Request(f"Set the climate control to {temperature:g} degrees {unit} with the fan at {fan}.",
                   [world.run("adjustClimateControl", temperature=temperature, unit=unit, fanSpeed=fan)[0]],
                   vague=f"Set the climate control to {temperature:g} degrees {unit}.", clarify=f"Fan speed {fan}, please.")


@skill(CAR)
def car_lights(world: World) -> Request:
    mode = world.rng.choice(["on", "off"])
    return Request(f"Turn the headlights {mode}.", [world.run("setHeadlights", mode=mode)[0]])


@skill(CAR)
def car_tires(world: World) -> Request:
    """Check the tyres, and only if the pressure is off, head to a shop: what to do depends on the result."""
    text, result = world.run("check_tire_pressure")
    calls = [text]
    if not result["healthy_tire_pressure"]:
        text2, shop = world.run("find_nearest_tire_shop")
        calls += [text2, world.run("set_navigation", destination=shop["shopLocation"])[0]]
    return Request("Check my tire pressure. If it isn't healthy, set the navigation to the nearest tire shop.", calls)


@skill(CAR)
def car_distance(world: World) -> Request:
    """Distance between two cities: the backend measures between zip codes, found first."""
    from fcenv.backends.vehicle_control import _DISTANCES, _ZIPCODES
    names = {code: name for name, code in _ZIPCODES}
    pairs = [(names[a], names[b]) for a, b, _ in _DISTANCES if a in names and b in names]
    a, b = world.rng.choice(pairs)
    if world.rng.random() < 0.5:
        a, b = b, a
    t1, za = world.run("get_zipcode_based_on_city", city=a)
    t2, zb = world.run("get_zipcode_based_on_city", city=b)
    t3, distance = world.run("estimate_distance", cityA=za["zipcode"], cityB=zb["zipcode"])
    world.memory["distance"] = distance["distance"]
    return Request(f"How far is it from {a} to {b}?", [t1, t2, t3])


@skill(CAR, follows="distance")
def car_can_drive(world: World) -> Request:
    if "distance" not in world.memory:
        raise GenerationError("no distance yet")
    return Request("Can I drive that far on the fuel I have now?",
                   [world.run("estimate_drive_feasibility_by_mileage", distance=world.memory["distance"])[0]])


@skill(CAR)
def car_status(world: World) -> Request:
    option, words = world.rng.choice([("fuel", "fuel level"), ("doors", "door locks"), ("climate", "climate settings"),
                                      ("parkingBrake", "parking brake"), ("engine", "engine state")])
    return Request(f"Show me the car's {words}.", [world.run("displayCarStatus", option=option)[0]])


@skill(CAR)
def car_parking_brake(world: World) -> Request:
    mode = world.rng.choice(["engage", "release"])
    return Request(f"{mode.capitalize()} the parking brake.", [world.run("activateParkingBrake", mode=mode)[0]])


@skill(CAR)
def car_cruise(world: World) -> Request:
    if world.instance(CAR).engine_state != "running":
        raise GenerationError("engine off")
    speed = float(world.rng.randint(6, 22) * 5)
    gap = float(world.rng.randint(3, 10) * 10)
    return Request(f"Turn on cruise control at {speed:g} km/h, keeping {gap:g} metres to the car ahead.",
                   [world.run("setCruiseControl", speed=speed, activate=True, distanceToNextVehicle=gap)[0]],
                   vague=f"Turn on cruise control at {speed:g} km/h.", clarify=f"Keep {gap:g} metres to the car ahead.")


@skill(CAR, POST, follows="distance")
def car_post_distance(world: World) -> Request:
    """Tweet a trip's distance: the number comes from an earlier answer."""
    if "distance" not in world.memory:
        raise GenerationError("no distance yet")
    prefix, calls = _post_login(world)
    content = f"Road trip ahead: {world.memory['distance']} km to go!"
    text, tweet = world.run("post_tweet", content=content)
    world.memory["tweet"] = tweet["id"]
    return Request(prefix + "Tweet 'Road trip ahead: <distance> km to go!' with that distance.", calls + [text])


@skill(CAR, MSG)
def car_msg_fuel(world: World) -> Request:
    person = world.rng.choice(list(world.instance(MSG).user_map))
    text, status = world.run("displayCarStatus", option="fuel")
    prefix, calls = _message_login(world)
    id_text, user = world.run("get_user_id", user=person)
    note = f"Fuel level: {status['fuelLevel']} gallons"
    return Request(prefix + f"Check my fuel level and message {person} 'Fuel level: <level> gallons'.",
                   [text] + calls + [id_text, world.run("send_message", receiver_id=user["user_id"], message=note)[0]])


def skills_for(classes: list[str]) -> list[Skill]:
    """The skills a task on ``classes`` can use: those whose classes it has."""
    return [s for s in SKILLS if set(s.classes) <= set(classes)]


def used_functions(calls: list[str]) -> list[str]:
    return [text.split("(", 1)[0] for text in calls]


def class_pairs() -> list[tuple[str, ...]]:
    """The one- and two-class combinations tasks are drawn from, each with a skill of its own."""
    singles = [(c,) for c in (FS, MSG, POST, TICKET, TRADE, TRAVEL, CAR, MATH)]
    pairs = sorted({s.classes for s in SKILLS if len(s.classes) == 2})
    return singles + pairs


def describe(value: Any) -> str:  # pragma: no cover - a debugging aid for the generator
    return repr(value)
