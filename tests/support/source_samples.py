"""Small samples written in the exact record layouts of the tool-calling sets fcenv converts
(from their dataset cards and published samples), for tests/env/test_sources.py.

Each sample is a list of records as the set stores them (JSON strings where the set uses JSON
strings) and, per record, the tasks it must become: the calls the source recorded, written as a
model answers in BFCL's prompting format, and a wrong answer that BFCL must fail.
"""

from __future__ import annotations

import json

# --------------------------------------------------------------------------- xLAM

XLAM = [
    {"id": 0, "query": "Where can I find live giveaways for beta access and games?",
     "answers": json.dumps([{"name": "live_giveaways_by_type", "arguments": {"type": "beta"}},
                            {"name": "live_giveaways_by_type", "arguments": {"type": "game"}}]),
     "tools": json.dumps([{"name": "live_giveaways_by_type",
                           "description": "Retrieve live giveaways from the GamerPower API based on the specified type.",
                           "parameters": {"type": {"description": "The type of giveaways to retrieve (e.g., game, loot, beta).",
                                                   "type": "str", "default": "game"}}}])},
    {"id": 1, "query": "What is the average of 4, 8 and 15? Also give me the 3 largest numbers of 7, 1, 9, 4.",
     "answers": json.dumps([{"name": "average", "arguments": {"numbers": [4, 8, 15]}},
                            {"name": "find_n_largest_numbers", "arguments": {"nums": [7, 1, 9, 4], "n": 3}}]),
     "tools": json.dumps([
         {"name": "average", "description": "Calculates the arithmetic mean of a list of numbers.",
          "parameters": {"numbers": {"description": "The list of numbers.", "type": "List[float]"}}},
         {"name": "find_n_largest_numbers", "description": "Finds the n largest numbers in a list.",
          "parameters": {"nums": {"description": "The list of numbers.", "type": "List[int]"},
                         "n": {"description": "The number of largest numbers to find.", "type": "int"},
                         "reverse": {"description": "Sort in reverse order.", "type": "bool, optional",
                                     "default": False}}}])},
]
XLAM_TASKS = [
    ("xlam_parallel_0", "[live_giveaways_by_type(type='beta'), live_giveaways_by_type(type='game')]",
     "[live_giveaways_by_type(type='beta'), live_giveaways_by_type(type='loot')]"),
    ("xlam_parallel_multiple_0", "[average(numbers=[4, 8, 15]), find_n_largest_numbers(nums=[7, 1, 9, 4], n=3)]",
     "[average(numbers=[4, 8, 15]), find_n_largest_numbers(nums=[7, 1, 9, 4], n=2)]"),
]
XLAM_BAD = [
    ({"id": 7, "query": "Weather in Oslo?", "answers": json.dumps([{"name": "get_wether", "arguments": {"city": "Oslo"}}]),
      "tools": json.dumps([{"name": "get_weather", "description": "Weather.", "parameters": {
          "city": {"description": "City.", "type": "str"}}}])}, "answers[0].name", "unknown_function"),
    ({"id": 8, "query": "Weather in Oslo?", "answers": json.dumps([{"name": "get_weather", "arguments": {"town": "Oslo"}}]),
      "tools": json.dumps([{"name": "get_weather", "description": "Weather.", "parameters": {
          "city": {"description": "City.", "type": "str"}}}])}, "answers[0].arguments.town", "unknown_argument"),
    ({"id": 9, "query": "Weather in Oslo?", "answers": '[{"name": "get_weather", "arguments": {"city": "Oslo"}',
      "tools": json.dumps([{"name": "get_weather", "description": "Weather.", "parameters": {
          "city": {"description": "City.", "type": "str"}}}])}, "answers", "unreadable"),
]

# --------------------------------------------------------------------------- Hermes

_HERMES_SYSTEM = (
    "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML "
    "tags. You may call one or more functions to assist with the user query. Don't make assumptions about what "
    "values to plug into functions.\n<tools>\n{tools}\n</tools>\nFor each function call return a json object with "
    "function name and arguments within <tool_call> </tool_call> tags with the following schema:\n<tool_call>\n"
    "{{'arguments': <args-dict>, 'name': <function-name>}}\n</tool_call>\n")
_CAMERA = [{"type": "function", "function": {
    "name": "get_camera_live_feed", "description": "Retrieves the live feed from a specified security camera.",
    "parameters": {"type": "object", "properties": {
        "camera_id": {"type": "string", "description": "The unique identifier for the camera."},
        "stream_quality": {"type": "string", "description": "The desired quality of the live stream.",
                           "enum": ["720p", "1080p", "4k"]}},
        "required": ["camera_id"]}}}]
_STOCK = [{"type": "function", "function": {
    "name": "get_stock_fundamentals", "description": "Get fundamental data for a stock symbol.",
    "parameters": {"type": "object", "properties": {"symbol": {"type": "string", "description": "The stock symbol."}},
                   "required": ["symbol"]}}}]
HERMES = [
    {"id": "85f6c398-69c7-4df2-aed1-29d614a93a26", "conversations": [
        {"from": "system", "value": _HERMES_SYSTEM.format(tools=repr(_CAMERA))},
        {"from": "human", "value": "Please show me the live feed of camera cam001 in 1080p."},
        {"from": "gpt", "value": "<tool_call>\n{'arguments': {'camera_id': 'cam001', 'stream_quality': '1080p'}, "
                                 "'name': 'get_camera_live_feed'}\n</tool_call>\n"}],
     "category": "IoT and Home Automation", "subcategory": "Security Camera Management",
     "task": "View and Manage Security Camera Feeds"},
    {"id": "c8c2b1d5", "conversations": [
        {"from": "system", "value": _HERMES_SYSTEM.format(tools=json.dumps(_STOCK))},
        {"from": "human", "value": "Fetch the stock fundamentals data for Tesla (TSLA)"},
        {"from": "gpt", "value": '<tool_call>\n{"arguments": {"symbol": "TSLA"}, "name": "get_stock_fundamentals"}\n'
                                 '</tool_call>'},
        {"from": "tool", "value": '<tool_response>\n{"name": "get_stock_fundamentals", "content": {"symbol": "TSLA", '
                                  '"pe_ratio": 49.6}}\n</tool_response>'},
        {"from": "gpt", "value": "Tesla's PE ratio is 49.6."}],
     "category": "Finance", "subcategory": "Stock Analysis", "task": "Fundamental Analysis"},
]
HERMES_TASKS = [
    ("hermes_simple_0", "[get_camera_live_feed(camera_id='cam001', stream_quality='1080p')]",
     "[get_camera_live_feed(camera_id='cam002', stream_quality='1080p')]"),
    ("hermes_simple_1", "[get_stock_fundamentals(symbol='TSLA')]", "[get_stock_fundamentals(symbol='AAPL')]"),
    ("hermes_irrelevance_0", "Tesla's PE ratio is 49.6.", "[get_stock_fundamentals(symbol='TSLA')]"),
]
HERMES_BAD = [
    ({"id": "bad", "conversations": [
        {"from": "system", "value": _HERMES_SYSTEM.format(tools=json.dumps(_STOCK))},
        {"from": "human", "value": "Fundamentals of TSLA?"},
        {"from": "gpt", "value": '<tool_call>\n{"arguments": {"symbol": "TSLA"}, "name": "get_stock_fundamentals"\n'
                                 '</tool_call>'}]}, "conversations[2].value <tool_call> 1", "unreadable"),
]

# --------------------------------------------------------------------------- glaive

GLAIVE = [
    {"system": "SYSTEM: You are a helpful assistant with access to the following functions. Use them if required -\n"
               + json.dumps({"name": "calculate_factorial", "description": "Calculate the factorial of a given number",
                             "parameters": {"type": "object", "properties": {"number": {
                                 "type": "integer", "description": "The number to calculate factorial for"}},
                                 "required": ["number"]}}, indent=4),
     "chat": "USER: Hi, I need to calculate the factorial of 5. Can you help me with that?\n\n\n"
             "ASSISTANT: <functioncall> {\"name\": \"calculate_factorial\", \"arguments\": '{\"number\": 5}'} "
             "<|endoftext|>\n\n\nFUNCTION RESPONSE: {\"result\": 120}\n\n\n"
             "ASSISTANT: The factorial of 5 is 120. <|endoftext|>\n\n\n"
             "USER: That was quick! Can you also calculate the factorial of 7?\n\n\n"
             "ASSISTANT: <functioncall> {\"name\": \"calculate_factorial\", \"arguments\": '{\"number\": 7}'} "
             "<|endoftext|>\n\n\nFUNCTION RESPONSE: {\"result\": 5040}\n\n\n"
             "ASSISTANT: The factorial of 7 is 5040. <|endoftext|>\n\n\n"},
    {"system": "SYSTEM: You are a helpful assistant, with no access to external functions.",
     "chat": "USER: Can you tell me a joke?\n\n\nASSISTANT: Why did the scarecrow win an award? Because he was "
             "outstanding in his field! <|endoftext|>\n\n\n"},
]
GLAIVE_TASKS = [
    ("glaive_simple_0", "[calculate_factorial(number=5)]", "[calculate_factorial(number=6)]"),
    ("glaive_irrelevance_0", "The factorial of 5 is 120.", "[calculate_factorial(number=5)]"),
    ("glaive_simple_1", "[calculate_factorial(number=7)]", "[calculate_factorial(number='7')]"),
    ("glaive_irrelevance_1", "The factorial of 7 is 5040.", "[calculate_factorial(number=7)]"),
    ("glaive_irrelevance_2", "Why did the scarecrow win an award?", "[tell_joke()]"),
]
GLAIVE_BAD = [
    ({"system": GLAIVE[0]["system"],
      "chat": "USER: Factorial of 5?\n\n\nASSISTANT: <functioncall> {\"name\": \"calculate_factorial\", "
              "\"arguments\": '{\"number\": \"five\"}'} <|endoftext|>\n\n\n"}, "chat, turn 2 (ASSISTANT).arguments.number",
     "type_mismatch"),
]

# --------------------------------------------------------------------------- ToolACE

_TOOLACE_FUNCTIONS = [
    {"name": "Get Manager Placeholder Image",
     "description": "Retrieve the manager placeholder image in PNG format for a specific sport.",
     "parameters": {"type": "dict", "properties": {"sport": {
         "description": "The name of the sport for which the manager placeholder image is required.", "type": "string"}},
         "required": ["sport"]}, "required": None},
    {"name": "GetCompetitions", "description": "Retrieve a list of football competitions that are televised in Peru.",
     "parameters": {"type": "dict", "properties": {}, "required": []}, "required": None},
]
TOOLACE = [
    {"system": "You are an expert in composing functions. You are given a question and a set of possible functions. "
               "\nBased on the question, you will need to make one or more function/tool calls to achieve the purpose. "
               "\nIf none of the function can be used, point it out. If the given question lacks the parameters "
               "required by the function,\nalso point it out. You should only return the function call in tools call "
               "sections.\nHere is a list of functions in JSON format that you can invoke:\n"
               + json.dumps(_TOOLACE_FUNCTIONS) + ". \nShould you decide to return the function call(s), Put it in "
               "the format of [func1(params_name=params_value, params_name2=params_value2...), func2(params)]\n"
               "NO other text MUST be included. \n",
     "conversations": [
         {"from": "user", "value": "Can you get me the manager placeholder image for soccer, and the competitions "
                                   "televised in Peru?"},
         {"from": "assistant", "value": "[Get Manager Placeholder Image(sport=\"soccer\"), GetCompetitions()]"},
         {"from": "tool", "value": "[{\"name\": \"Get Manager Placeholder Image\", \"results\": {\"image\": "
                                   "\"soccer.png\"}}, {\"name\": \"GetCompetitions\", \"results\": {\"competitions\": "
                                   "[\"Liga 1\"]}}]"},
         {"from": "assistant", "value": "Here is the soccer image, and Liga 1 is televised in Peru."}]},
]
TOOLACE_TASKS = [
    ("toolace_parallel_multiple_0", "[Get_Manager_Placeholder_Image(sport='soccer'), GetCompetitions()]",
     "[Get_Manager_Placeholder_Image(sport='tennis'), GetCompetitions()]"),
    ("toolace_irrelevance_0", "Here is the soccer image.", "[GetCompetitions()]"),
]
TOOLACE_BAD = [
    ({"system": TOOLACE[0]["system"], "conversations": [
        {"from": "user", "value": "Competitions in Peru?"},
        {"from": "assistant", "value": "[GetCompetitions(country=\"Peru\")]"}]},
     "conversations[1].value.arguments.country", "unknown_argument"),
]

# --------------------------------------------------------------------------- APIGen-MT

_AIRLINE_TOOLS = [
    {"name": "get_reservation_details", "description": "Get the details of a reservation.",
     "parameters": {"type": "object", "properties": {"reservation_id": {
         "type": "string", "description": "The reservation id, such as '8JX2WO'."}}, "required": ["reservation_id"]}},
    {"name": "cancel_reservation", "description": "Cancel the whole reservation.",
     "parameters": {"type": "object", "properties": {"reservation_id": {
         "type": "string", "description": "The reservation ID, such as 'ZFA04Y'."}}, "required": ["reservation_id"]}},
]
APIGEN_MT = [
    {"conversations": [
        {"from": "human", "value": "Hello, I want to cancel my reservation 0U4NPP from PHL to DEN."},
        {"from": "gpt", "value": "I can help with that. Let me look the reservation up first."},
        {"from": "human", "value": "Sure, go ahead."},
        {"from": "function_call", "value": "{\"name\": \"get_reservation_details\", \"arguments\": "
                                           "{\"reservation_id\": \"0U4NPP\"}}"},
        {"from": "observation", "value": "{\"reservation_id\": \"0U4NPP\", \"origin\": \"PHL\", \"destination\": "
                                         "\"DEN\", \"insurance\": \"yes\"}"},
        {"from": "gpt", "value": "The reservation has travel insurance, so it can be cancelled. Shall I proceed?"},
        {"from": "human", "value": "Yes, please."},
        {"from": "function_call", "value": "{\"name\": \"cancel_reservation\", \"arguments\": "
                                           "{\"reservation_id\": \"0U4NPP\"}}"},
        {"from": "observation", "value": "{\"reservation_id\": \"0U4NPP\", \"status\": \"cancelled\"}"},
        {"from": "gpt", "value": "Your reservation 0U4NPP is cancelled."}],
     "system": "# Airline Agent Policy\nThe current time is 2024-05-15 15:00:00 EST. As an airline agent, you can "
               "help users book, modify, or cancel flight reservations.",
     "tools": json.dumps(_AIRLINE_TOOLS)},
]
APIGEN_MT_TASKS = [
    ("apigen_mt_irrelevance_0", "I can help with that.", "[cancel_reservation(reservation_id='0U4NPP')]"),
    ("apigen_mt_multiple_0", "[get_reservation_details(reservation_id='0U4NPP')]",
     "[cancel_reservation(reservation_id='0U4NPP')]"),
    ("apigen_mt_irrelevance_1", "Shall I proceed?", "[cancel_reservation(reservation_id='0U4NPP')]"),
    ("apigen_mt_multiple_1", "[cancel_reservation(reservation_id='0U4NPP')]",
     "[get_reservation_details(reservation_id='0U4NPP')]"),
    ("apigen_mt_irrelevance_2", "Your reservation is cancelled.", "[get_reservation_details(reservation_id='0U4NPP')]"),
]
APIGEN_MT_BAD = [
    ({"conversations": [
        {"from": "human", "value": "Cancel 0U4NPP."},
        {"from": "function_call", "value": "{\"name\": \"cancel_reservation\", \"arguments\": {}}"}],
      "system": "policy", "tools": json.dumps(_AIRLINE_TOOLS)}, "conversations[1].value.arguments", "missing_required"),
]

# --------------------------------------------------------------------------- OpenAI / TRL

_LIGHT_TOOLS = [{"type": "function", "function": {
    "name": "control_light", "description": "Controls the lights in a room.",
    "parameters": {"type": "object", "properties": {
        "room": {"type": "string", "description": "The name of the room."},
        "state": {"type": "string", "description": "The desired state of the light (\"on\" or \"off\")."},
        "brightness": {"type": "number", "description": "Brightness from 0 to 1.", "default": 1.0}},
        "required": ["room", "state"]}}}]
OPENAI = [
    {"messages": [
        {"role": "user", "content": "Turn on the living room lights."},
        {"role": "assistant", "tool_calls": [{"type": "function", "function": {
            "name": "control_light", "arguments": {"room": "living room", "state": "on"}}}]},
        {"role": "tool", "name": "control_light", "content": "The lights in the living room are now on."},
        {"role": "assistant", "content": "Done!"}],
     "tools": _LIGHT_TOOLS},
    {"messages": [
        {"role": "system", "content": "You are a home assistant."},
        {"role": "user", "content": "Dim the kitchen light to half."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "control_light", "arguments": "{\"room\": \"kitchen\", \"state\": \"on\", \"brightness\": 0.5}"}}]}],
     "tools": _LIGHT_TOOLS},
]
OPENAI_TASKS = [
    ("openai_simple_0", "[control_light(room='living room', state='on')]", "[control_light(room='living room', state='off')]"),
    ("openai_irrelevance_0", "Done!", "[control_light(room='living room', state='on')]"),
    ("openai_simple_1", "[control_light(room='kitchen', state='on', brightness=0.5)]",
     "[control_light(room='kitchen', state='on')]"),
]
OPENAI_BAD = [
    ({"messages": [
        {"role": "user", "content": "Lights on in the hall."},
        {"role": "assistant", "tool_calls": [{"type": "function", "function": {
            "name": "control_light", "arguments": "{\"room\": \"hall\", \"state\": \"on\""}}]}],
      "tools": _LIGHT_TOOLS}, "messages[1].tool_calls[0].function.arguments", "unreadable"),
]

FORMATS = {
    "xlam": (XLAM, XLAM_TASKS, XLAM_BAD),
    "hermes": (HERMES, HERMES_TASKS, HERMES_BAD),
    "glaive": (GLAIVE, GLAIVE_TASKS, GLAIVE_BAD),
    "toolace": (TOOLACE, TOOLACE_TASKS, TOOLACE_BAD),
    "apigen_mt": (APIGEN_MT, APIGEN_MT_TASKS, APIGEN_MT_BAD),
    "openai": (OPENAI, OPENAI_TASKS, OPENAI_BAD),
}
