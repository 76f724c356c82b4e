"""Runs inside the oracle venv (bfcl-eval installed there, never in ours).

Reads one JSON request per line on stdin and writes one JSON response per line on stdout.
It drives BFCL's own public functions the way BFCL's evaluation runner does, so that our
verdicts can be compared with the reference's on the same inputs. Setup follows
../shared/docs/bfcl_reference.md section 8.

Requests (``op``):
  decode    {text, language}                      -> {ok, decoded | error}
  single    {text, category, function, ground_truth} -> {valid, error_type, error}
  ast       {decoded, category, function, ground_truth, language} -> checker dict
  execute   {calls, initial_config, involved_classes, key, long_context} -> {results, state}
  multi     {steps, id, category, initial_config, involved_classes, ground_truth} -> verdict
  decode_exact {text, language}                   -> {ok, kind, decoded (typed form) | error}
  time_decode  {texts, language, repeat}          -> {seconds, decodes}
  fc_single {family, text, category, function, ground_truth} -> {valid, error_type}   (FC mode)
  fc_multi  {family, entry, turns, ground_truth}  -> {valid, error_type, decoded}      (FC mode)
  fc_tools  {family, entry}                       -> {tools}   (what the family's FC handler prompts with)
  score_card {model, scores: {category: {accuracy, total_count}}, results?: [[result line]]}
            -> {rows: {file: [header, row before formatting]}, csv: {file: text}, known}
            (eval_runner_helper.record_cost_latency on each file's lines, then generate_leaderboard_csv, one
            model: BFCL's own config where it lists the model, else a stand-in named as given)
  model_registry {}                               -> {name: ModelConfig's fields, map}   (MODEL_CONFIG_MAPPING)
  category_sizes {}                               -> {category: entries}   (what a missing category counts as)
  score_empty {category}                          -> {raised}   (save_eval_results on a category with no entries)
  memory_ready {}                                 -> {missing: [module, ...]}   (what the memory backends import)
  memory {class, scenario, conversations: [{test_id, calls}], embeddings?}
                                                  -> {conversations: [{context, results, memory}]}   (a snapshot chain)
  agentic {response, possible_answers}            -> agentic_checker's dict, or {raised}
  web_search {show_snippet, serpapi_backend, calls: [{name, arguments}]}
                                                  -> {results: [value | {raised}]}   (BFCL's WebSearchAPI, its
                                                     SerpAPI client sent to serpapi_backend)
  agentic_scores {category, results: [{id, result}], answers: [ground truth], family?}
                                                  -> {accuracy, total_count}   (eval_runner.agentic_runner, a
                                                     prompting model's decoder, or the FC family's handler,
                                                     over one category's result lines)
  memory_entries {category}                       -> BFCL's entries of a memory category, prerequisites first
  memory_episode {class, scenario, functions, conversations: [{test_id, question, turns: [[step text]]}],
                  possible_answers, embeddings?}  -> per conversation {opening, results, memory}, and the verdict
  variation_decode {text, config}                 -> like decode_exact, in a prompt variation's format
  variation_single {text, config, id, function, ground_truth} -> {valid, error_type}   (a format-sensitivity answer)
  variation_configs {}                            -> {configs}   (BFCL's 26 format-sensitivity configurations)
  format_sensitivity {results, model, partial?}   -> {header, failed: {id: error_type}}   (the set's runner)
  fc_flow   {family, entries, ground_truths, concurrency} -> {entries: [{id, valid, error_type, turns, result}]}
            (BFCL's inference runner and evaluation runner on whole entries; while it runs, the process
            asks the client for the model's answers: {queries} lines out, {answers} lines in; op_fc_flow)
"""

import os
import sys
import tempfile
import types

os.environ.setdefault("BFCL_PROJECT_ROOT", tempfile.mkdtemp(prefix="bfcl-oracle-"))
_stub = types.ModuleType("bfcl_eval.constants.model_config")
_stub.MODEL_CONFIG_MAPPING = type(
    "AnyModel", (dict,), {"__missing__": lambda self, key: types.SimpleNamespace(underscore_to_dot=False)}
)()
sys.modules["bfcl_eval.constants.model_config"] = _stub

# The repository root, for the stdlib-only helpers shared with the tests.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import copy  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402

from bfcl_eval.constants.enums import Language, ReturnFormat  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: E402
from bfcl_eval.model_handler.utils import default_decode_ast_prompting  # noqa: E402
from bfcl_eval.utils import is_empty_output, is_function_calling_format_output  # noqa: E402

from harness.oracle.state import public_state  # noqa: E402
from harness.oracle.typed import typed  # noqa: E402

LANGUAGES = {
    "python": (Language.PYTHON, ReturnFormat.PYTHON),
    "java": (Language.JAVA, ReturnFormat.JAVA),
    "javascript": (Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT),
}
_counter = itertools.count()


def language_of(category):
    if "javascript" in category:
        return "javascript"
    if "java" in category:
        return "java"
    return "python"


def jsonable(value):
    """Tuples become {"__tuple__": [...]} so the caller can tell them from lists."""
    if isinstance(value, tuple):
        return {"__tuple__": [jsonable(v) for v in value]}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return {"__float__": repr(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return {"__repr__": repr(value)}


def unjson(value):
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            return tuple(unjson(v) for v in value["__tuple__"])
        if set(value) == {"__float__"}:
            return float(value["__float__"])
        return {k: unjson(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unjson(v) for v in value]
    return value


def op_decode(req):
    _, fmt = LANGUAGES[req["language"]]
    try:
        return {"ok": True, "decoded": jsonable(default_decode_ast_prompting(req["text"], fmt))}
    except Exception as exc:  # the runner treats every exception as a decode failure
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def op_single(req):
    """BFCL's runner for one single-turn entry (AST, relevance or irrelevance)."""
    category = req["category"]
    if "relevance" in category or "irrelevance" in category:
        try:
            decoded = default_decode_ast_prompting(req["text"], ReturnFormat.PYTHON)
            contains_call = not is_empty_output(decoded)
        except Exception:
            contains_call = False
        if "irrelevance" in category:
            valid = not contains_call
            return {"valid": valid, "error_type": None if valid else "irrelevance_error:decoder_success"}
        return {"valid": contains_call, "error_type": None if contains_call else "relevance_error:decoder_failed"}
    language, fmt = LANGUAGES[language_of(category)]
    try:
        decoded = default_decode_ast_prompting(req["text"], fmt)
    except Exception as exc:
        return {"valid": False, "error_type": "ast_decoder:decoder_failed", "error": str(exc)}
    if not is_function_calling_format_output(decoded):
        return {"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"}
    result = ast_checker(req["function"], decoded, req["ground_truth"], language, category, "oracle")
    valid = bool(result["valid"])
    return {
        "valid": valid,
        "error_type": None if valid else result.get("error_type"),
        "error": jsonable(result.get("error", [])),
        "decoded": jsonable(decoded),
    }


def op_ast(req):
    language, _ = LANGUAGES[req.get("language") or language_of(req["category"])]
    result = ast_checker(req["function"], unjson(req["decoded"]), req["ground_truth"], language, req["category"], "oracle")
    return jsonable(result)


def op_decode_exact(req):
    """Like ``decode``, plus the runner's failure kind, with values in ``typed`` form."""
    _, fmt = LANGUAGES[req["language"]]
    return _decode_exact(req["text"], fmt)


def _decode_exact(text, return_format, tag=False):
    """BFCL's prompting decode of ``text`` with the runner's failure kind, values in ``typed`` form."""
    try:
        decoded = default_decode_ast_prompting(text, return_format, tag)
    except Exception as exc:
        return {"ok": False, "kind": "decoder_failed", "error": f"{type(exc).__name__}: {exc}"}
    if not is_function_calling_format_output(decoded):
        return {"ok": False, "kind": "decoder_wrong_output_format", "error": repr(decoded)[:200]}
    return {"ok": True, "kind": None, "decoded": typed(decoded)}


def op_time_decode(req):
    """Seconds to decode every text of ``texts`` ``repeat`` times (failures included)."""
    import time

    _, fmt = LANGUAGES[req["language"]]
    texts = req["texts"]
    start = time.perf_counter()
    for _ in range(req.get("repeat", 1)):
        for text in texts:
            try:
                default_decode_ast_prompting(text, fmt)
            except Exception:
                pass
    return {"seconds": time.perf_counter() - start, "decodes": len(texts) * req.get("repeat", 1)}


FUNC_SOURCE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
BACKEND_MODULES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}


def result_string(value):
    """How BFCL's executor turns a method's return value into the text the model sees."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        try:
            return json.dumps(value)
        except Exception:
            return str(value)
    return str(value)


def op_execute(req):
    """Fresh instances of the reference classes, then direct method calls on them.

    calls: [{"name", "args": [...], "kwargs": {...}}]; a name is routed to the instance
    that has it as a public method, the last involved class winning on a clash.
    """
    import importlib
    import inspect


    instances = {}
    for cls in req["involved_classes"]:
        module = importlib.import_module(f"{FUNC_SOURCE}.{BACKEND_MODULES[cls]}")
        inst = getattr(module, cls)()
        if cls != "MathAPI":
            inst._load_scenario(copy.deepcopy(req["initial_config"].get(cls, {})), long_context=req.get("long_context", False))
        instances[cls] = inst
    routes = {}
    for inst in instances.values():
        for name, member in inspect.getmembers(inst, inspect.ismethod):
            if not name.startswith("_"):
                routes[name] = inst
    results = []
    for call in req["calls"]:
        inst = routes.get(call["name"])
        if inst is None:
            results.append(f"Error during execution: name '{call['name']}' is not defined")
            continue
        try:
            value = getattr(inst, call["name"])(*unjson(call.get("args", [])), **unjson(call.get("kwargs", {})))
            results.append(result_string(value))
        except Exception as exc:
            results.append(f"Error during execution: {exc}")
    return {"results": results, "states": {cls: public_state(inst) for cls, inst in instances.items()}}


def op_prompt(req):
    """The first turn's messages as BFCL builds them for a prompting model at inference."""
    from bfcl_eval.model_handler.utils import system_prompt_pre_processing_chat_model
    from bfcl_eval.utils import add_language_specific_hint_to_function_doc

    entry = add_language_specific_hint_to_function_doc([copy.deepcopy(req["entry"])])[0]
    return {"messages": system_prompt_pre_processing_chat_model(entry["question"][0], entry["function"], entry["id"])}


# --- ops for the single-turn checker tests and bench (checkers/) ---


def _raised(exc):
    return {"raised": f"{type(exc).__name__}: {exc}"}


def op_convert(req):
    """BFCL's Java/JavaScript string->value converter on one value; exceptions are reported."""
    from bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter import (
        java_type_converter,
    )
    from bfcl_eval.eval_checker.ast_eval.type_convertor.js_type_converter import js_type_converter

    convert = java_type_converter if req["language"] == "java" else js_type_converter
    try:
        return {"value": jsonable(convert(req["value"], req["type"], req.get("nested")))}
    except Exception as exc:
        return _raised(exc)


def op_ast_safe(req):
    """Like "ast", but an exception inside BFCL's checker (where BFCL's own runner crashes) is reported."""
    try:
        return op_ast(req)
    except Exception as exc:
        return _raised(exc)


def op_single_safe(req):
    """Like "single", but an exception inside BFCL's checker is reported instead of ending the request."""
    try:
        return op_single(req)
    except Exception as exc:
        return _raised(exc)


def op_time_single(req):
    """Seconds to run the runner logic of "single" over ``items``, ``repeat`` times (exceptions counted in)."""
    import time

    items = req["items"]
    start = time.perf_counter()
    for _ in range(req.get("repeat", 1)):
        for item in items:
            try:
                op_single(item)
            except Exception:
                pass
    return {"seconds": time.perf_counter() - start, "calls": len(items) * req.get("repeat", 1)}


_LONG_CONTEXT_SNAPSHOT = {}


def fresh_long_context():
    """Put BFCL's long-context constants back as they were at import, in place.

    Its classes pad instances with these objects without copying them, so one evaluation's
    calls would leak into the next in the same process. Restoring them makes every request
    behave as in a fresh BFCL process.
    """
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context

    if not _LONG_CONTEXT_SNAPSHOT:
        _LONG_CONTEXT_SNAPSHOT.update({k: copy.deepcopy(v) for k, v in vars(long_context).items() if k.isupper()})
    for name, value in _LONG_CONTEXT_SNAPSHOT.items():
        current, fresh = getattr(long_context, name), copy.deepcopy(value)
        if isinstance(current, dict):
            current.clear()
            current.update(fresh)
        elif isinstance(current, list):
            current[:] = fresh


def op_multi(req):
    """BFCL's evaluation of one multi-turn trajectory of raw step texts, plus, for differential
    tests, every call's result string and each class's public state after every turn."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    from bfcl_eval.model_handler.utils import default_decode_execute_prompting


    entry = req["entry"]
    category = entry["id"].rsplit("_", 1)[0]
    long_context = "long_context" in category or "composite" in category
    fresh_long_context()
    fresh_method_defaults()

    def decode(text):
        try:
            return default_decode_execute_prompting(text)
        except Exception:
            return []

    decoded = [[d for d in map(decode, steps) if d] for steps in req["turns"]]
    tag = f"oracle{next(_counter)}"
    try:
        if len(req["turns"]) != len(req["ground_truth"]):
            verdict = {"valid": False, "error_type": "multi_turn:force_terminated"}
        else:
            verdict = multi_turn_checker(decoded, req["ground_truth"], entry, category, tag + "_check")
        fresh_long_context()  # the check above changed the shared objects
        fresh_method_defaults()
        results, states = [], []
        for steps in decoded:
            instances = {}
            for calls in steps:
                out, instances = multi_turn_utils.execute_multi_turn_func_call(
                    calls, entry["initial_config"], entry["involved_classes"], tag + "_replay", entry["id"],
                    long_context=long_context, is_evaL_run=True)
                results.append(out)
            if not instances:  # no call this turn: look the instances up without running anything
                _, instances = multi_turn_utils.execute_multi_turn_func_call(
                    [], entry["initial_config"], entry["involved_classes"], tag + "_replay", entry["id"],
                    long_context=long_context, is_evaL_run=True)
            states.append({name: public_state(inst) for name, inst in instances.items()})
    finally:
        # BFCL caches instances in module globals by name; drop this request's.
        for key in [k for k in vars(multi_turn_utils) if tag in k]:
            delattr(multi_turn_utils, key)
    return {"valid": bool(verdict["valid"]), "error_type": None if verdict["valid"] else verdict.get("error_type"),
            "decoded": decoded, "results": results, "states": states}


def op_time_ast(req):
    """Seconds to run BFCL's ast_checker alone over already-decoded ``items``, ``repeat`` times."""
    import time

    items = [(it["function"], unjson(it["decoded"]), it["ground_truth"], LANGUAGES[language_of(it["category"])][0],
              it["category"]) for it in req["items"]]
    start = time.perf_counter()
    for _ in range(req.get("repeat", 1)):
        for function, decoded, ground_truth, language, category in items:
            try:
                ast_checker(function, decoded, ground_truth, language, category, "oracle")
            except Exception:
                pass
    return {"seconds": time.perf_counter() - start, "calls": len(items) * req.get("repeat", 1)}


def op_time_multi(req):
    """Seconds BFCL's runner needs to evaluate the given multi-turn trajectories (decode every
    step, then ``multi_turn_checker``), ``repeat`` times over."""
    import time

    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    from bfcl_eval.model_handler.utils import default_decode_execute_prompting

    def decode(text):
        try:
            return default_decode_execute_prompting(text)
        except Exception:
            return []

    elapsed = 0.0
    for _ in range(req.get("repeat", 1)):
        for item in req["items"]:
            entry = item["entry"]
            fresh_long_context()
            fresh_method_defaults()
            tag = f"timed{next(_counter)}"
            start = time.perf_counter()
            decoded = [[d for d in map(decode, steps) if d] for steps in item["turns"]]
            if len(decoded) == len(item["ground_truth"]):
                multi_turn_checker(decoded, item["ground_truth"], entry, entry["id"].rsplit("_", 1)[0], tag)
            elapsed += time.perf_counter() - start
            for key in [k for k in vars(multi_turn_utils) if tag in k]:
                delattr(multi_turn_utils, key)
    return {"seconds": elapsed}

# --- FC (native tool calling) mode: BFCL's handlers for open models of three families ---

FC_HANDLERS = {
    "hermes": ("qwen_fc", "QwenFCHandler"),
    "llama_json": ("llama_3_1", "LlamaHandler_3_1"),
    "mistral": ("mistral_fc", "MistralFCHandler"),
}


def _stub_vendor_modules():
    """The handlers' modules import the OpenAI client, ``requests`` and ``overrides`` to serve
    models; decoding and prompt building use none of them. Stand-ins where they are missing."""
    import importlib.util

    if "overrides" not in sys.modules and importlib.util.find_spec("overrides") is None:
        overrides = types.ModuleType("overrides")
        overrides.override = overrides.final = lambda f: f
        overrides.EnforceOverrides = object
        sys.modules["overrides"] = overrides
    for name, attrs in (("openai", ("OpenAI",)), ("requests", ())):
        if name not in sys.modules and importlib.util.find_spec(name) is None:
            module = types.ModuleType(name)
            for attr in attrs:
                setattr(module, attr, object)
            sys.modules[name] = module


def fc_handler(family):
    """An instance of the family's BFCL handler, without starting a server."""
    import importlib

    _stub_vendor_modules()
    module, cls = FC_HANDLERS[family]
    handler_class = getattr(importlib.import_module(f"bfcl_eval.model_handler.local_inference.{module}"), cls)
    return object.__new__(handler_class)


def _completion(text):
    """What the OpenAI completions client returns; the server drops special tokens (vLLM's
    default), and Mistral's [TOOL_CALLS] is one."""
    choice = types.SimpleNamespace(text=text)
    return types.SimpleNamespace(choices=[choice], usage=types.SimpleNamespace(prompt_tokens=0, completion_tokens=0))


def _served_text(family, text):
    return text.replace("[TOOL_CALLS]", "") if family == "mistral" else text


def fc_recorded(handler, family, text):
    """The result BFCL records for one single-turn answer (its inference-time parsing included)."""
    try:
        return handler._parse_query_response_prompting(_completion(_served_text(family, text)))["model_responses"]
    except Exception as exc:
        return f"Error during inference: {exc}"


def op_fc_single(req):
    """BFCL's inference parsing and evaluation runner for one single-turn FC answer."""
    handler = fc_handler(req["family"])
    category = req["category"]
    recorded = fc_recorded(handler, req["family"], req["text"])
    language, _ = LANGUAGES[language_of(category)]
    try:
        decoded = handler.decode_ast(recorded, language, False)
        decode_error = None
    except Exception as exc:
        decoded, decode_error = None, exc
    if "relevance" in category or "irrelevance" in category:
        contains_call = decode_error is None and not is_empty_output(decoded)
        if "irrelevance" in category:
            valid = not contains_call
            return {"valid": valid, "error_type": None if valid else "irrelevance_error:decoder_success"}
        return {"valid": contains_call, "error_type": None if contains_call else "relevance_error:decoder_failed"}
    if decode_error is not None:
        return {"valid": False, "error_type": "ast_decoder:decoder_failed", "error": str(decode_error)}
    if not is_function_calling_format_output(decoded):
        return {"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"}
    result = ast_checker(req["function"], decoded, req["ground_truth"], language, category, "oracle")
    valid = bool(result["valid"])
    return {"valid": valid, "error_type": None if valid else result.get("error_type"), "decoded": jsonable(decoded)}


def op_fc_multi(req):
    """BFCL's inference loop for an open FC model (the family's handler parses each answer,
    keeps the history, builds every prompt from it, decodes and runs the calls), served the
    given step texts turn by turn, then its evaluation runner on what it recorded.

    A turn ends at the first step whose calls do not decode (its later texts are not used);
    an exception anywhere in the loop is BFCL's inference error for the whole entry.
    """
    from bfcl_eval.constants.default_prompts import (
        DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING,
        MAXIMUM_STEP_LIMIT,
    )
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response

    family, entry = req["family"], copy.deepcopy(req["entry"])
    handler = fc_handler(family)
    category = entry["id"].rsplit("_", 1)[0]
    long_context = "long_context" in category or "composite" in category
    fresh_long_context()
    fresh_method_defaults()
    tag = f"oracle{next(_counter)}"
    recorded, force_quit = [], False
    try:
        data = {"message": [], "function": entry["function"]}
        for turn, steps in enumerate(req["turns"]):
            message = entry["question"][turn]
            if str(turn) in entry.get("missed_function", {}):
                message = [{"role": "user", "content": DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(
                    functions=entry["missed_function"][str(turn)])}]
            data["message"].extend(message)
            recorded.append([])
            steps_done = 0
            for text in steps:
                handler._format_prompt(data["message"], data["function"])  # the query's prompt
                response = handler._parse_query_response_prompting(_completion(_served_text(family, text)))
                recorded[-1].append(response["model_responses"])
                data = handler._add_assistant_message_prompting(data, response)
                try:
                    calls = handler.decode_execute(response["model_responses"], has_tool_call_tag=False)
                    if is_empty_execute_response(calls):
                        break
                except Exception:
                    break
                results, _ = multi_turn_utils.execute_multi_turn_func_call(
                    calls, entry["initial_config"], entry["involved_classes"], tag + "_inference", entry["id"],
                    long_context=long_context, is_evaL_run=False)
                response["model_responses_decoded"] = calls
                data = handler._add_execution_results_prompting(data, results, response)
                steps_done += 1
                if steps_done > MAXIMUM_STEP_LIMIT:  # BFCL's force quit ends the entry's inference
                    force_quit = True
                    break
            if force_quit:
                break
    except Exception as exc:
        recorded = f"Error during inference: {type(exc).__name__}: {exc}"
    try:
        if not isinstance(recorded, list):
            return {"valid": False, "error_type": "multi_turn:inference_error"}
        if len(recorded) != len(req["ground_truth"]):
            return {"valid": False, "error_type": "multi_turn:force_terminated"}
        decoded = []
        for steps in recorded:
            decoded.append([])
            for response in steps:
                try:
                    calls = handler.decode_execute(response, has_tool_call_tag=False)
                except Exception:
                    continue
                if not is_empty_execute_response(calls):
                    decoded[-1].append(calls)
        fresh_long_context()
        fresh_method_defaults()
        verdict = multi_turn_checker(decoded, req["ground_truth"], entry, category, tag + "_check")
        return {"valid": bool(verdict["valid"]), "error_type": None if verdict["valid"] else verdict.get("error_type"),
                "decoded": decoded}
    finally:
        for key in [k for k in vars(multi_turn_utils) if tag in k]:
            delattr(multi_turn_utils, key)


HANDLERS = {"multi": op_multi, "time_multi": op_time_multi, "prompt": op_prompt, "decode": op_decode, "single": op_single, "ast": op_ast, "execute": op_execute}
HANDLERS.update(convert=op_convert, ast_safe=op_ast_safe, single_safe=op_single_safe, time_single=op_time_single,
                time_ast=op_time_ast)
HANDLERS.update(decode_exact=op_decode_exact, time_decode=op_time_decode)
def op_fc_tools(req):
    """The tools the family's FC handler builds its first prompt with: the entry's docs as BFCL
    loads them for inference (language hints added), through the handler's own pre-processing."""
    from bfcl_eval.utils import add_language_specific_hint_to_function_doc

    entry = add_language_specific_hint_to_function_doc([copy.deepcopy(req["entry"])])[0]
    return {"tools": fc_handler(req["family"])._pre_query_processing_prompting(entry)["function"]}


HANDLERS.update(fc_single=op_fc_single, fc_multi=op_fc_multi, fc_tools=op_fc_tools)


_METHOD_DEFAULTS = {}


def fresh_method_defaults():
    """Put the reference classes' mutable default arguments back as they were at first use.

    BFCL's TwitterAPI.post_tweet stores its default ``mentions`` list in the tweet, so a later
    ``mention`` changes the default for every following call in the process. Restoring the
    defaults makes every request behave as in a fresh BFCL process.
    """
    import importlib

    for cls_name, module_name in BACKEND_MODULES.items():
        cls = getattr(importlib.import_module(f"{FUNC_SOURCE}.{module_name}"), cls_name)
        for attr, member in vars(cls).items():
            defaults = getattr(member, "__defaults__", None)
            if not defaults:
                continue
            key = (cls_name, attr)
            if key not in _METHOD_DEFAULTS:
                _METHOD_DEFAULTS[key] = copy.deepcopy(defaults)
            member.__defaults__ = copy.deepcopy(_METHOD_DEFAULTS[key])


def op_execute_turns(req):
    """Like ``execute``, in a fresh-process state, with the calls split into turns:
    {turns: [[call, ...], ...]} -> {results: [[str, ...] per turn], states: [{cls: state} per turn]}."""
    import importlib
    import inspect


    fresh_long_context()
    fresh_method_defaults()
    instances = {}
    for cls in req["involved_classes"]:
        inst = getattr(importlib.import_module(f"{FUNC_SOURCE}.{BACKEND_MODULES[cls]}"), cls)()
        if cls != "MathAPI":
            inst._load_scenario(copy.deepcopy(req["initial_config"].get(cls, {})), long_context=req.get("long_context", False))
        instances[cls] = inst
    routes = {}
    for inst in instances.values():
        for name, _ in inspect.getmembers(inst, inspect.ismethod):
            if not name.startswith("_"):
                routes[name] = inst
    results, states = [], []
    for turn in req["turns"]:
        turn_results = []
        for call in turn:
            inst = routes.get(call["name"])
            if inst is None:
                turn_results.append(f"Error during execution: name '{call['name']}' is not defined")
                continue
            try:
                value = getattr(inst, call["name"])(*unjson(call.get("args", [])), **unjson(call.get("kwargs", {})))
                turn_results.append(result_string(value))
            except Exception as exc:
                turn_results.append(f"Error during execution: {exc}")
        results.append(turn_results)
        try:
            states.append({cls: public_state(inst) for cls, inst in instances.items()})
        except RecursionError:  # a directory moved into itself: no finite state to report
            states.append(None)
    return {"results": results, "states": states}


HANDLERS.update(execute_turns=op_execute_turns)


# --- The score card: BFCL's leaderboard tables for one model ---

def _score_helper():
    """``eval_runner_helper`` imported without numpy and pandas: they serve only the latency
    percentile of runs that recorded latencies and the wandb upload, neither used here."""
    import importlib.util

    for name in ("numpy", "pandas"):
        if name not in sys.modules and importlib.util.find_spec(name) is None:
            sys.modules[name] = types.ModuleType(name)
    from bfcl_eval.eval_checker import eval_runner_helper

    # It reads a missing category's whole question file for its size, again for each card (a
    # minute per card); it only takes the length, so one read per process gives the same.
    if not hasattr(eval_runner_helper.load_dataset_entry, "cache_info"):
        import functools

        eval_runner_helper.load_dataset_entry = functools.lru_cache(maxsize=None)(eval_runner_helper.load_dataset_entry)
    return eval_runner_helper


_REGISTRY = {}


def model_registry():
    """BFCL's MODEL_CONFIG_MAPPING as data: {name: {field: value}, "map": the dict it is listed
    in}. Read from model_config.py's source, not imported: importing it imports every vendor's
    SDK its handlers use. Each entry's fields are ModelConfig's defaults updated with the
    literal keywords of its ModelConfig(...) call (the handler, a class, is left out); the maps
    are merged in the order MODEL_CONFIG_MAPPING spreads them."""
    if _REGISTRY:
        return _REGISTRY
    import ast
    from pathlib import Path

    import bfcl_eval

    tree = ast.parse((Path(bfcl_eval.__file__).parent / "constants" / "model_config.py").read_text())
    defaults, maps, order = {}, {}, []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelConfig":
            defaults = {field.target.id: ast.literal_eval(field.value) for field in node.body
                        if isinstance(field, ast.AnnAssign) and field.value is not None}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            name = node.targets[0].id
            if name == "MODEL_CONFIG_MAPPING":
                order = [spread.id for key, spread in zip(node.value.keys, node.value.values) if key is None]
                continue
            entries = {}
            for key, call in zip(node.value.keys, node.value.values):
                fields = {word.arg: ast.literal_eval(word.value) for word in call.keywords if word.arg != "model_handler"}
                entries[ast.literal_eval(key)] = {**defaults, **fields, "map": name}
            maps[name] = entries
    for name in order:
        _REGISTRY.update(maps[name])
    return _REGISTRY


def op_model_registry(req):
    return model_registry()


def _register(model):
    """The model as BFCL's lookup finds it (its folder name, each _ read back as /): BFCL's own
    config where BFCL lists the model; else a stand-in (BFCL refuses a model it does not list)
    named as given, with no prices (a locally served model's cost) and "N/A" for link,
    organisation and licence. Returns whether BFCL lists it."""
    name = model.replace("/", "_").replace("_", "/")
    known = model_registry().get(name)
    fields = known or {"display_name": model, "url": "N/A", "org": "N/A", "license": "N/A", "input_price": None,
                       "output_price": None, "underscore_to_dot": False}
    _stub.MODEL_CONFIG_MAPPING[name] = types.SimpleNamespace(**fields)
    return known is not None


def op_score_card(req):
    """generate_leaderboard_csv on a leaderboard table of one model, as BFCL's runner fills it:
    record_cost_latency on each result file's lines (``results``: a list of files' lines, none
    by default), then {category: {accuracy, total_count}}. The model is registered as
    ``_register`` says. Each table's row is captured as the CSV writer receives it, before it
    formats the numbers."""
    import contextlib
    import tempfile as _tempfile
    from pathlib import Path

    helper = _score_helper()
    model = req["model"]
    known = _register(model)
    folder = model.replace("/", "_")
    table = {}
    for lines in req.get("results", []):
        helper.record_cost_latency(table, folder, lines)
    table.setdefault(folder, {}).update({c: dict(score) for c, score in req["scores"].items()})
    rows = {}
    writer = helper.write_score_csv_file

    def capturing_writer(data, file_path, header, *args, **kwargs):
        rows[Path(file_path).name] = [list(header), copy.deepcopy(data[0])]
        return writer(data, file_path, header, *args, **kwargs)

    helper.write_score_csv_file = capturing_writer
    try:
        with _tempfile.TemporaryDirectory() as out, contextlib.redirect_stdout(sys.stderr):  # it prints progress
            helper.generate_leaderboard_csv(table, Path(out))
            csv = {p.name: p.read_text() for p in sorted(Path(out).glob("*.csv"))}
    finally:
        helper.write_score_csv_file = writer
    return {"rows": rows, "csv": csv, "known": known}


def op_category_sizes(req):
    from bfcl_eval.constants.category_mapping import ALL_SCORING_CATEGORIES
    from bfcl_eval.utils import load_dataset_entry

    return {c: len(load_dataset_entry(c, include_prereq=False, include_language_specific_hint=False))
            for c in ALL_SCORING_CATEGORIES}


def op_score_empty(req):
    import tempfile as _tempfile
    from pathlib import Path

    helper = _score_helper()
    with _tempfile.TemporaryDirectory() as out:
        try:
            helper.save_eval_results([], 0, [], req["category"], "oracle", Path(out))
        except Exception as exc:
            return {"raised": type(exc).__name__}
    return {"raised": None}


HANDLERS.update(score_card=op_score_card, category_sizes=op_category_sizes, score_empty=op_score_empty,
                model_registry=op_model_registry)


# --- The memory categories: BFCL's memory backends and its agentic checker ---

MEMORY_MODULES = {"MemoryAPI_kv": "memory_kv", "MemoryAPI_rec_sum": "memory_rec_sum",
                  "MemoryAPI_vector": "memory_vector"}


def op_memory_ready(req):
    """The packages BFCL's memory backends import that this venv lacks (``make oracle`` adds them)."""
    import importlib.util

    wanted = req.get("modules") or ["overrides", "rank_bm25", "numpy", "faiss"]
    return {"missing": [name for name in wanted if importlib.util.find_spec(name) is None]}


def _memory_state(instance):
    """The memory itself, in the form BFCL's flush writes it (JSON-ready)."""
    state = {}
    for name in ("core_memory", "archival_memory"):
        if hasattr(instance, name):
            value = getattr(instance, name)
            state[name] = value.export() if hasattr(value, "export") else value
    if hasattr(instance, "memory"):
        state["memory"] = instance.memory
    return json.loads(json.dumps(state, default=repr))


def op_memory(req):
    """A chain of conversations on one memory backend, as BFCL's inference runs them: each on a
    fresh instance whose ``_load_scenario`` reads the scenario's snapshot folder (a temporary
    result folder of this request), the calls made directly, and a prerequisite conversation's
    memory flushed at its end. Per conversation: the core-memory text its system prompt shows,
    every call's result string, and the memory after it."""
    import contextlib
    import importlib
    import inspect
    import tempfile as _tempfile
    from pathlib import Path

    if req["class"] == "MemoryAPI_vector":
        _table_encoder(req.get("embeddings") or {})
    module = importlib.import_module(f"{FUNC_SOURCE}.{MEMORY_MODULES[req['class']]}")
    cls = getattr(module, req["class"])
    out = []
    with _tempfile.TemporaryDirectory() as result_dir:
        for conversation in req["conversations"]:
            instance = cls()
            config = {"model_result_dir": Path(result_dir), "scenario": req["scenario"],
                      "test_id": conversation["test_id"], "test_category": conversation["test_id"].rsplit("_", 1)[0]}
            with contextlib.redirect_stdout(sys.stderr):  # it prints a warning when no snapshot is there
                instance._load_scenario(config)
            context = instance._dump_core_memory_to_context()
            routes = {name for name, _ in inspect.getmembers(instance, inspect.ismethod) if not name.startswith("_")}
            results = []
            for call in conversation["calls"]:
                if call["name"] not in routes:
                    results.append(f"Error during execution: name '{call['name']}' is not defined")
                    continue
                try:
                    value = getattr(instance, call["name"])(*unjson(call.get("args", [])), **unjson(call.get("kwargs", {})))
                    results.append(result_string(value))
                except Exception as exc:
                    results.append(f"Error during execution: {exc}")
            if "prereq" in conversation["test_id"]:
                instance._flush_memory_to_local_file()
            out.append({"context": context, "results": results, "memory": _memory_state(instance)})
    return {"conversations": out}


_EMBEDDINGS = {}  # text -> vector, the stand-in encoder's table (the latest request's)


def _table_encoder(table):
    """A stand-in for sentence-transformers (which this venv does not hold): a text is encoded by
    a lookup in ``table`` ({text: vector}), so the vector backend's own code (its store, faiss'
    exact index and search) runs on embeddings both sides share. A text not in the table fails."""
    import numpy as np

    _EMBEDDINGS.clear()
    _EMBEDDINGS.update(table)
    if "sentence_transformers" in sys.modules:
        return

    class TableEncoder:
        def __init__(self, *args, **kwargs):
            pass

        def get_sentence_embedding_dimension(self):
            return 384

        def encode(self, texts, normalize_embeddings=False):
            return np.asarray([_EMBEDDINGS[text] for text in texts], dtype=np.float32)

    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = TableEncoder
    sys.modules["sentence_transformers"] = module


def op_agentic(req):
    from bfcl_eval.eval_checker.agentic_eval.agentic_checker import agentic_checker

    try:
        return jsonable(agentic_checker(req["response"], req["possible_answers"]))
    except Exception as exc:
        return _raised(exc)


def _stand_in(name, **attributes):
    """A module the oracle venv lacks, standing in with what is used of it (nothing on this path)."""
    import importlib.util

    if name not in sys.modules and importlib.util.find_spec(name) is None:
        sys.modules[name] = types.ModuleType(name)
        for key, value in attributes.items():
            setattr(sys.modules[name], key, value)


def op_agentic_scores(req):
    """BFCL's ``agentic_runner`` on one category's result lines, as its evaluation runs it for a
    prompting model (the last step its decoder reads no call from is the final answer); with
    ``family``, for that family's open FC model: each step text first becomes what its handler
    records at inference, then its handler decodes it."""
    import tempfile as _tempfile
    from pathlib import Path

    _score_helper()  # eval_runner imports it
    # Its command-line setup imports these (.env files, progress bars), not the agentic runner.
    _stand_in("dotenv", load_dotenv=lambda *args, **kwargs: False)
    _stand_in("tqdm", tqdm=lambda iterable=None, **kwargs: iterable)
    from bfcl_eval.eval_checker.eval_runner import agentic_runner
    from bfcl_eval.model_handler.utils import default_decode_execute_prompting

    results = req["results"]
    if req.get("family"):
        handler = fc_handler(req["family"])
        results = [{**line, "result": [[fc_recorded(handler, req["family"], text) for text in turn]
                                       for turn in line["result"]]} if isinstance(line["result"], list) else line
                   for line in results]
    else:
        handler = types.SimpleNamespace(decode_execute=lambda text, has_tool_call_tag=False:
                                        default_decode_execute_prompting(text, has_tool_call_tag))
    prompts = [{"id": line["id"], "question": []} for line in req["results"]]
    answers = [{"id": line["id"], "ground_truth": truth} for line, truth in zip(req["results"], req["answers"])]
    with _tempfile.TemporaryDirectory() as out:
        accuracy, total = agentic_runner(handler, results, prompts, answers, "oracle", req["category"], Path(out))
    return {"accuracy": accuracy, "total_count": total}


def op_web_search(req):
    """BFCL's WebSearchAPI as it is, its SerpAPI client sent to the given backend (a local server
    in the tests) and given a key, as BFCL's .env gives it one."""
    os.environ["SERPAPI_API_KEY"] = req.get("key", "test-key")
    from serpapi.serp_api_client import SerpApiClient

    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.web_search import WebSearchAPI

    SerpApiClient.BACKEND = req["serpapi_backend"]
    api = WebSearchAPI()
    api._load_scenario({"show_snippet": req["show_snippet"]})
    results = []
    for call in req["calls"]:
        try:
            results.append(getattr(api, call["name"])(**call["arguments"]))
        except Exception as exc:
            results.append({"raised": str(exc)})
    return {"results": results}


def op_memory_entries(req):
    """``load_dataset_entry`` of one memory category (from the wheel's own data), as the
    inference run gets it: prerequisite entries included, functions without language hints."""
    from bfcl_eval.utils import load_dataset_entry

    entries = load_dataset_entry(req["category"], include_prereq=True, include_language_specific_hint=False)
    return {"entries": [{key: entry.get(key) for key in ("id", "question", "function", "involved_classes", "scenario",
                                                         "depends_on")} for entry in entries]}


def op_memory_episode(req):
    """One memory question as BFCL plays and judges it for a prompting model served the given
    step texts: each conversation (prerequisites, then the question) runs through the loop of
    ``inference_multi_turn_prompting`` (memory system prompt from the instance BFCL's executor
    makes, the function prompt, decode each step with ``default_decode_execute_prompting``, end
    the turn on a step without calls, force quit past MAXIMUM_STEP_LIMIT steps, flush a
    prerequisite's memory at its end); the question's recorded steps then go through the agentic
    runner's rule (the last step that decodes to no call is the answer) and ``agentic_checker``.
    A turn's texts past the one that ends it are not served, as a model would not be asked."""
    import contextlib
    import tempfile as _tempfile
    from pathlib import Path

    from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT
    from bfcl_eval.eval_checker.agentic_eval.agentic_checker import agentic_checker
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response
    from bfcl_eval.model_handler.utils import (
        add_memory_instruction_system_prompt,
        default_decode_execute_prompting,
        system_prompt_pre_processing_chat_model,
    )
    from bfcl_eval.utils import add_language_specific_hint_to_function_doc

    if req["class"] == "MemoryAPI_vector":
        _table_encoder(req.get("embeddings") or {})
    cls = req["class"]
    tag = f"oracle{next(_counter)}"
    out, recorded = [], None
    try:
        with _tempfile.TemporaryDirectory() as result_dir, contextlib.redirect_stdout(sys.stderr):
            for conversation in req["conversations"]:
                test_id = conversation["test_id"]
                category = test_id.rsplit("_", 1)[0]
                config = {cls: {"model_result_dir": Path(result_dir), "scenario": req["scenario"], "test_id": test_id,
                                "test_category": category}}
                _, instances = multi_turn_utils.execute_multi_turn_func_call([], config, [cls], tag, test_id)
                question = add_memory_instruction_system_prompt(copy.deepcopy(conversation["question"]), category,
                                                                req["scenario"], instances[cls])
                entry = add_language_specific_hint_to_function_doc(
                    [{"id": test_id, "function": copy.deepcopy(req["functions"])}])[0]
                opening = system_prompt_pre_processing_chat_model(question[0], entry["function"], test_id)
                results, steps_recorded, force_quit = [], [], False
                for turn in conversation["turns"]:
                    steps_recorded.append([])
                    count = 0
                    for text in turn:
                        steps_recorded[-1].append(text)
                        try:
                            calls = default_decode_execute_prompting(text)
                            if is_empty_execute_response(calls):
                                break
                        except Exception:
                            break
                        step_results, _ = multi_turn_utils.execute_multi_turn_func_call(
                            calls, config, [cls], tag, test_id)
                        results.append(step_results)
                        count += 1
                        if count > MAXIMUM_STEP_LIMIT:
                            force_quit = True
                            break
                    if force_quit:
                        break
                if "prereq" in test_id:
                    instances[cls]._flush_memory_to_local_file()
                else:
                    recorded = steps_recorded
                out.append({"opening": opening, "results": results, "memory": _memory_state(instances[cls])})
    finally:
        for key in [k for k in vars(multi_turn_utils) if tag in k]:
            delattr(multi_turn_utils, key)
    # The agentic runner on the question's record.
    if not isinstance(recorded, list) or len(recorded) != 1:
        verdict = {"valid": False, "error_type": "agentic:inference_error"}
    else:
        last = None
        for text in recorded[0]:
            try:
                if is_empty_execute_response(default_decode_execute_prompting(text)):
                    last = text
            except Exception:
                last = text
        if not last:
            verdict = {"valid": False, "error_type": "agentic:no_last_message"}
        else:
            checked = agentic_checker(last, req["possible_answers"])
            verdict = {"valid": bool(checked["valid"]), "error_type": checked.get("error_type")}
    return {"conversations": out, "verdict": verdict}


HANDLERS.update(memory_ready=op_memory_ready, memory=op_memory, agentic=op_agentic, memory_entries=op_memory_entries,
                memory_episode=op_memory_episode, agentic_scores=op_agentic_scores,
                web_search=op_web_search)


# --- Format sensitivity: BFCL's prompt variations, their decoders and the set's runner ---

class _PromptingHandler:
    """What BFCL's runner asks of a prompting model's handler: its default decoder."""

    def decode_ast(self, result, return_format, has_tool_call_tag):
        return default_decode_ast_prompting(result, return_format, has_tool_call_tag)


def _runner():
    """``eval_runner`` imported without the packages only its command line uses (dotenv, tqdm)
    where this venv lacks them; the helper's numpy and pandas as ``_score_helper`` does."""
    import importlib.util

    _score_helper()
    if "dotenv" not in sys.modules and importlib.util.find_spec("dotenv") is None:
        sys.modules["dotenv"] = types.ModuleType("dotenv")
        sys.modules["dotenv"].load_dotenv = lambda *args, **kwargs: None
    if "tqdm" not in sys.modules and importlib.util.find_spec("tqdm") is None:
        sys.modules["tqdm"] = types.ModuleType("tqdm")
        sys.modules["tqdm"].tqdm = lambda iterable=None, *args, **kwargs: iterable
        sys.modules["tqdm"].tqdm.write = lambda text, *args, **kwargs: print(text, file=sys.stderr)
    from bfcl_eval.eval_checker import eval_runner

    return eval_runner


def _variation(config):
    from bfcl_eval.model_handler.utils import parse_prompt_variation_params

    return_format, tag, *_ = parse_prompt_variation_params(config)
    return ReturnFormat(return_format), tag


def op_variation_decode(req):
    """``decode_exact`` for the return format and tool-call tag of a prompt variation."""
    return_format, tag = _variation(req["config"])
    return _decode_exact(req["text"], return_format, tag)


def op_variation_single(req):
    """The runner's verdict on one format-sensitivity answer (``_evaluate_single_ast_entry`` as
    ``format_sensitivity_runner`` calls it: the entry's id as the category)."""
    _evaluate_single_ast_entry = _runner()._evaluate_single_ast_entry
    return_format, tag = _variation(req["config"])
    result = _evaluate_single_ast_entry(_PromptingHandler(), f"format_sensitivity_0:{req['config']}:{req['id']}",
                                        req["text"], req["ground_truth"], {"function": req["function"]}, "oracle",
                                        "format_sensitivity", Language.PYTHON, return_format, tag)
    return {"valid": bool(result["valid"]), "error_type": result.get("error_type")}


def op_variation_configs(req):
    from bfcl_eval.utils import get_all_format_sensitivity_configs

    return {"configs": get_all_format_sensitivity_configs()}


def op_format_sensitivity(req):
    """BFCL's runner on a format-sensitivity result file, as ``runner`` reads it (sorted by id):
    ``evaluate_task`` writes the score file; its header (the figures) and the ids it failed,
    with their error types, come back."""
    import contextlib
    import tempfile as _tempfile
    from pathlib import Path

    evaluate_task = _runner().evaluate_task
    from bfcl_eval.utils import load_file

    model_result = load_file(req["results"], sort_by_id=True)
    with _tempfile.TemporaryDirectory() as out, contextlib.redirect_stdout(sys.stderr):
        evaluate_task("format_sensitivity", Path(out), Path(out), model_result, req["model"], _PromptingHandler(),
                      {}, allow_missing=req.get("partial", False))
        score, = Path(out).rglob("BFCL_v4_format_sensitivity_score.json")
        header, *failures = load_file(score)
    return {"header": header, "failed": {f["id"]: f["error_type"] for f in failures}}


HANDLERS.update(variation_decode=op_variation_decode, variation_single=op_variation_single,
                variation_configs=op_variation_configs, format_sensitivity=op_format_sensitivity)


# --- BFCL's own inference flow for an open FC model, served by a client over this process's stdio ---
#
# ``fc_flow`` plays whole entries through BFCL's per-entry inference runner
# (``_llm_response_generation.multi_threaded_inference``: the handler's
# ``inference_multi_turn_prompting`` loop, its parsing, history, decoding and execution), with
# only the model call replaced: the handler's ``_query_prompting`` hands BFCL's chat
# (``inference_data["message"]``) and tools (``inference_data["function"]``) to the client and
# waits for its text. Then BFCL's evaluation runner judges what the loop recorded
# (``eval_runner._evaluate_single_multi_turn_entry``).
#
# Each entry runs in a process of its own, forked from this one before any entry ran, where
# BFCL's runner would run it in a thread: BFCL's classes share module-level objects between
# instances (the long-context padding, TwitterAPI.post_tweet's default list), so entries played
# side by side in one process could see each other's calls. A forked entry starts from a
# just-imported BFCL, as in a BFCL process of its own; its evaluation starts from that state
# again, as BFCL's separate evaluation process does.

FLOW_MODEL = "bfcl-flow"  # the handler's model name: it keys the instances BFCL caches per entry


def _flow_handler(family):
    """The family's BFCL handler, its model call answered by the client (``_ask``)."""
    import importlib
    import time

    _stub_vendor_modules()
    from bfcl_eval.model_handler.base_handler import BaseHandler

    module, cls = FC_HANDLERS[family]
    base = getattr(importlib.import_module(f"bfcl_eval.model_handler.local_inference.{module}"), cls)

    def _query_prompting(self, inference_data):
        """What the OpenAI completions call returns (the text, no token counts) and its latency."""
        # BFCL's own prompt, built as its query builds it and not sent: a chat it cannot write
        # (a call its parser kept that has no "arguments") fails the entry here, as in BFCL.
        self._format_prompt(inference_data["message"], inference_data["function"])
        start = time.time()
        answer = self._ask({"messages": inference_data["message"], "tools": inference_data["function"]})
        if "error" in answer:  # the client could not answer (a prompt past the context window)
            raise RuntimeError(answer["error"])
        return _completion(_served_text(family, answer["text"])), time.time() - start

    # What overrides' @override marks (the handlers' metaclass wants it on an overriding method);
    # the decorator itself finds base classes by name in module globals, which a class made here lacks.
    _query_prompting.__override__ = True
    flow_class = type(f"Flow{cls}", (base,), {"_query_prompting": _query_prompting})

    handler = object.__new__(flow_class)
    # BaseHandler's settings alone: the OSS handler's own __init__ opens an OpenAI client.
    BaseHandler.__init__(handler, FLOW_MODEL, 0.0, FLOW_MODEL, True)
    return handler


def _flow_entries(raw):
    """An entry as BFCL's generation runner loads it (function docs of its classes, held-out
    functions moved aside, language hints) and as its evaluation runner loads it (no hints)."""
    from bfcl_eval.utils import (
        add_language_specific_hint_to_function_doc,
        populate_test_cases_with_predefined_functions,
        process_agentic_test_case,
    )

    def loaded(hints):
        entries = populate_test_cases_with_predefined_functions(process_agentic_test_case([copy.deepcopy(raw)]))
        return add_language_specific_hint_to_function_doc(entries)[0] if hints else entries[0]

    return loaded(True), loaded(False)


def _flow_turns(handler, result):
    """Per turn of a recorded result: its steps, whether BFCL's step limit ended it (force
    quit: more than MAXIMUM_STEP_LIMIT steps, the last one with calls) and whether it ended
    with a text reply (its last step decodes to no call)."""
    from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response

    def has_calls(text):
        try:
            return not is_empty_execute_response(handler.decode_execute(text, has_tool_call_tag=False))
        except Exception:
            return False

    turns = []
    for steps in result:
        last_calls = bool(steps) and has_calls(steps[-1])
        turns.append({"steps": len(steps), "force_quit": len(steps) > MAXIMUM_STEP_LIMIT and last_calls,
                      "text_reply": bool(steps) and not last_calls})
    return turns


def _play_flow_entry(handler, raw, ground_truth, ask):
    """One entry through BFCL's inference runner, then its evaluation runner, in this process."""
    from bfcl_eval import _llm_response_generation as generation

    runner = _runner()  # eval_runner, with the stand-ins its import needs (also generation's tqdm)
    entry, judged = _flow_entries(raw)
    handler._ask = ask
    recorded = generation.multi_threaded_inference(handler, entry, False, True)["result"]
    fresh_long_context()  # the evaluation runs as in a BFCL process of its own
    fresh_method_defaults()
    category = raw["id"].rsplit("_", 1)[0]
    verdict = runner._evaluate_single_multi_turn_entry(handler, raw["id"], recorded, ground_truth, judged,
                                                       FLOW_MODEL + "-check", category)
    valid = bool(verdict["valid"])
    return {"id": raw["id"], "valid": valid, "error_type": None if valid else verdict["error"]["error_type"],
            "turns": _flow_turns(handler, recorded) if isinstance(recorded, list) else [], "result": recorded}


class _FlowChild:
    """An entry played in a forked process; it talks to this one through a pipe each way."""

    def __init__(self, handler, raw, ground_truth):
        from_child, to_parent = os.pipe()  # (read end, write end)
        from_parent, to_child = os.pipe()
        sys.stdout.flush()
        self.pid = os.fork()
        if self.pid == 0:  # the entry's process
            os.close(from_child)
            os.close(to_child)
            self._serve_entry(handler, raw, ground_truth, os.fdopen(to_parent, "w"), os.fdopen(from_parent))
        os.close(to_parent)
        os.close(from_parent)
        self.reader, self.writer = os.fdopen(from_child), os.fdopen(to_child, "w")
        self.id = raw["id"]

    @staticmethod
    def _serve_entry(handler, raw, ground_truth, out, answers):
        # stdout is the client's channel: what BFCL's loop prints goes nowhere.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)

        def ask(query):
            out.write(json.dumps({"query": query}) + "\n")
            out.flush()
            return json.loads(answers.readline())

        status = 0
        try:
            message = {"done": _play_flow_entry(handler, raw, ground_truth, ask)}
        except BaseException as exc:  # reported to the parent, which ends the session with it
            message, status = {"failed": f"{raw['id']}: {type(exc).__name__}: {exc}"}, 1
        out.write(json.dumps(message) + "\n")
        out.flush()
        os._exit(status)  # no exit handlers: they belong to the parent

    def receive(self):
        line = self.reader.readline()
        if not line:
            raise RuntimeError(f"entry {self.id}: its process ended without a word ({self.reap()})")
        return json.loads(line)

    def send(self, answer):
        self.writer.write(json.dumps(answer) + "\n")
        self.writer.flush()

    def reap(self):
        self.reader.close()
        self.writer.close()
        return os.waitpid(self.pid, 0)[1]


def op_fc_flow(req):
    """Entries played through BFCL's inference flow, the model's answers asked of the client.

    Request: {family, entries: [raw BFCL entries], ground_truths: [per entry], concurrency}.
    While it runs this process writes ``{"queries": [{"id", "messages", "tools"}, ...]}`` lines
    and reads one ``{"answers": [{"text"} | {"error"}, ...]}`` line after each, in order. Every
    live entry asks at most one query per batch: a batch is sent once each of them has asked or
    finished. Answer: {entries: [{id, valid, error_type, turns: [{steps, force_quit,
    text_reply}], result}]} in the entries' order.
    """
    handler = _flow_handler(req.get("family", "hermes"))
    _runner()
    from bfcl_eval import _llm_response_generation  # noqa: F401  (imported once, before the forks)

    fresh_long_context()  # their first call keeps BFCL's objects as imported, for every entry
    fresh_method_defaults()
    pending = list(range(len(req["entries"])))[::-1]
    live, verdicts = {}, {}
    while pending or live:
        while pending and len(live) < req.get("concurrency", 64):
            index = pending.pop()
            live[index] = _FlowChild(handler, req["entries"][index], req["ground_truths"][index])
        asked = {}  # entry -> its query
        for index, child in sorted(live.items()):
            message = child.receive()
            if "query" in message:
                asked[index] = message["query"]
                continue
            child.reap()
            del live[index]
            if "failed" in message:
                for other in live.values():
                    os.kill(other.pid, 9)
                    other.reap()
                raise RuntimeError(message["failed"])
            verdicts[index] = message["done"]
        if not asked:
            continue
        sys.stdout.write(json.dumps({"queries": [{"id": live[i].id, **query} for i, query in asked.items()]}) + "\n")
        sys.stdout.flush()
        answers = json.loads(sys.stdin.readline())["answers"]
        for index, answer in zip(asked, answers):
            live[index].send(answer)
    return {"entries": [verdicts[i] for i in range(len(req["entries"]))]}


HANDLERS.update(fc_flow=op_fc_flow)


def main():
    for line in sys.stdin:
        req = json.loads(line)
        try:
            resp = HANDLERS[req["op"]](req)
        except Exception as exc:  # report, never die: one bad request must not end the batch
            resp = {"driver_error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(resp) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

