"""Behaviours of the group-a backends that users rely on, checked without the oracle."""

from __future__ import annotations

import decimal
import inspect
import json

import mpmath
import pytest

from fcenv.backends import FUNC_DOC_FILES, backend_class
from fcenv.backends.file_system import Directory, File, GorillaFileSystem
from fcenv.backends.long_context import filler
from fcenv.backends.math_api import MathAPI
from fcenv.backends.message_api import MessageAPI
from fcenv.backends.posting_api import TwitterAPI
from tests.support.backend_differential import result_string
from tests.support.files_math_social_calls import load_docs

GROUP_A = ("GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI")
TREE = {
    "root": {
        "ws": {
            "type": "directory",
            "contents": {
                "notes.txt": {"type": "file", "content": "beta\nalpha\ngamma ray\n"},
                "log.txt": {"type": "file", "content": "one\ntwo"},
                "docs": {
                    "type": "directory",
                    "contents": {"deep": {"type": "directory", "contents": {}}},
                },
                "empty": {"type": "directory", "contents": {}},
            },
        }
    }
}


def file_system(long_context: bool = False) -> GorillaFileSystem:
    fs = GorillaFileSystem()
    fs._load_scenario(json.loads(json.dumps(TREE)), long_context=long_context)
    return fs


@pytest.mark.parametrize("cls", GROUP_A)
def test_public_methods_and_parameters_follow_the_docs(bfcl_dir, cls):
    docs = {doc["name"]: doc for doc in load_docs(bfcl_dir, FUNC_DOC_FILES[cls])}
    klass = backend_class(cls)
    public = {
        name
        for name, _ in inspect.getmembers(klass, inspect.isfunction)
        if not name.startswith("_")
    }
    assert public == set(docs)
    for name, doc in docs.items():
        params = list(inspect.signature(getattr(klass, name)).parameters.values())[1:]
        assert [p.name for p in params] == list(doc["parameters"]["properties"]), name
        required = {p.name for p in params if p.default is inspect.Parameter.empty}
        assert required == set(doc["parameters"].get("required", [])), name


def test_file_system_navigation_and_editing():
    fs = file_system()
    assert fs.pwd() == {"current_working_directory": "/ws"}
    assert fs.cd("docs") == {"current_working_directory": "docs"}
    assert fs.cd("..") == {}  # BFCL answers an empty dict when going up
    assert fs.cd("docs/deep")["error"].endswith("Only one folder level at a time is supported.")
    assert fs.touch("new.txt") is None
    assert fs.echo("hello world", "new.txt") is None
    assert fs.cat("new.txt") == {"file_content": "hello world"}
    assert fs.echo("x", "missing.txt") == {
        "error": "echo: cannot write to 'missing.txt': No such file"
    }
    assert fs.sort("notes.txt") == {"sorted_content": "alpha\nbeta\ngamma ray"}
    assert fs.wc("notes.txt", "w") == {"count": 4, "type": "words"}
    assert fs.grep("notes.txt", "a r") == {"matching_lines": ["gamma ray"]}
    assert fs.tail("notes.txt", 2) == {"last_lines": "alpha\ngamma ray"}
    assert fs.find(".", "deep") == {"matches": ["./docs/deep"]}
    assert fs.mv("new.txt", "empty") == {"result": "'new.txt' moved to 'empty/new.txt'"}
    assert fs.touch("bad:name") == {"error": "touch: cannot touch 'bad:name': Invalid character"}
    sizes = len("beta\nalpha\ngamma ray\n") + len("one\ntwo") + len("hello world")
    assert fs.du() == {"disk_usage": f"{sizes} bytes"}


def test_file_and_directory_equality_ignores_parents_and_timestamps():
    a, b = Directory("d"), Directory("d", parent=Directory("other"))
    assert a == b
    a._add_file("f", "1")
    assert a != b
    b._add_file("f", "1")
    assert a == b and File("f", "x") == File("f", "x") and File("f", "x") != Directory("f")
    assert file_system() == file_system()


def test_directory_copies_share_children_as_in_bfcl():
    fs = file_system()
    fs.cp("docs", "copy")
    original, duplicate = fs.root.contents["docs"], fs.root.contents["copy"]
    assert duplicate.contents["deep"] is original.contents["deep"]
    assert duplicate.parent is fs.root


def test_directory_copied_into_itself_is_walked_without_hanging():
    fs = file_system()
    fs.cp("empty", "empty")
    with pytest.raises(RecursionError):
        fs.find()
    with pytest.raises(RecursionError):
        fs.du()


def test_long_context_pads_leaf_directories_and_extends_files():
    fs = file_system(long_context=True)
    padding = filler("POPULATE_FILE_EXTENSION")
    assert list(fs.root.contents["empty"].contents) == padding
    assert list(fs.root.contents["docs"].contents["deep"].contents) == padding
    assert list(fs.root.contents["docs"].contents) == ["deep"]  # not a leaf: left alone
    notes = fs.root.contents["notes.txt"].content
    assert notes == "beta\nalpha\ngamma ray\n" + filler("FILE_CONTENT_EXTENSION")
    assert "log.txt" in filler("FILES_TAIL_USED")
    assert fs.root.contents["log.txt"].content == "one\ntwo"
    assert fs.long_context is True


def test_hostile_sizes_stay_cheap():
    fs = file_system()
    big = ("word " * 40 + "\n") * 10_000  # about 2 MB
    fs.echo(big, "notes.txt")
    assert fs.wc("notes.txt")["count"] == 10_000
    assert len(fs.grep("notes.txt", "word")["matching_lines"]) == 10_000
    assert fs.tail("notes.txt", 10**6)["last_lines"].count("\n") == 9_999
    assert fs.tail("notes.txt", -(10**18))["last_lines"] == ""
    assert fs.du(human_readable=True)["disk_usage"].endswith("MB")
    math = MathAPI()
    with pytest.raises(ValueError, match="integer string conversion"):
        math.power(7, 10**12)
    assert math.round_number(2**70, -(10**18)) == {"result": 0}
    assert math.logarithm(10, 3, 10**9) == {"error": ""}
    with pytest.raises(MemoryError):
        math.square_root(2, 10**12)
    assert str(math.square_root(100, 10**12)["result"]) == "10"  # exact roots at any precision


def test_message_api_flow_and_deterministic_ids():
    api = MessageAPI()
    api._load_scenario({})
    assert api.send_message("USR002", "hi") == {"error": "No user is currently logged in."}
    assert api.message_login("USR001")["login_status"] is True
    first = api.send_message("USR002", "hi")
    assert first["message_id"] == {"new_id": 67410}  # BFCL's seed 200191
    assert api.search_messages("HI") == {"results": [{"receiver_id": "USR002", "message": "hi"}]}
    assert api.delete_message("USR002")["deleted_status"] is True
    assert api.add_contact("Eve") == {
        "added_status": True,
        "user_id": "USR005",
        "message": "Contact 'Eve' added successfully.",
    }
    assert api.get_message_stats() == {"stats": {"received_count": 3, "total_contacts": 3}}
    other = MessageAPI()
    other._load_scenario({})
    assert api != other and MessageAPI.__hash__ is None


def test_twitter_default_mentions_leak_only_within_one_instance():
    first, second = TwitterAPI(), TwitterAPI()
    for api in (first, second):
        api._load_scenario({"authenticated": True})
    tweet = first.post_tweet("hello")
    first.mention(tweet["id"], ["@bob"])
    # BFCL stores the default list itself, so the mention shows on later default tweets...
    assert first.post_tweet("again")["mentions"] == ["@bob"]
    # ...but our leak stops at the instance, so episodes stay independent.
    assert second.post_tweet("fresh")["mentions"] == []
    assert inspect.signature(TwitterAPI.post_tweet).parameters["mentions"].default == []


def test_twitter_search_matches_content_and_whole_tags():
    api = TwitterAPI()
    api._load_scenario(
        {
            "tweets": {
                "0": {
                    "id": 0,
                    "username": "a",
                    "content": "Plain",
                    "tags": ["#Tech"],
                    "mentions": [],
                }
            }
        }
    )
    assert (
        api.search_tweets("#tech") and not api.search_tweets("tech") and api.search_tweets("LAIN")
    )


def test_math_results_print_like_bfcl_without_touching_global_precision():
    dps, prec = mpmath.mp.dps, decimal.getcontext().prec
    math = MathAPI()
    assert result_string(math.logarithm(8, 2, 10)) == "{'result': mpf('3.000000000029')}"
    assert result_string(math.square_root(2, 10)) == "{'result': Decimal('1.414213562')}"
    assert result_string(math.si_unit_conversion(1, "nm", "nm")) == '{"result": 0.9999999999999999}'
    assert math.imperial_si_conversion(32, "fahrenheit", "celsius") == {"result": 0.0}
    assert math.mean([]) == {"error": "Cannot calculate mean of an empty list"}
    assert math.add("a", "b") == {"result": "ab"}  # BFCL only rejects what + rejects
    assert math.multiply("a", 3) == {"error": "Both inputs must be numbers"}
    assert (mpmath.mp.dps, decimal.getcontext().prec) == (dps, prec)
