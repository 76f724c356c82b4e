"""Fetch BFCL's data files from the ``bfcl-eval`` wheel on the package registry.

Only data leaves the wheel: the JSON files under ``bfcl_eval/data/`` and the literal filler
constants of the multi-turn long-context scenarios (``long_context.py`` holds nothing but
literals; they are read with ``ast.literal_eval`` and written as ``long_context.json``). No
code of the package is imported, run or kept.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

BFCL_VERSION = "2026.3.23"
# Where `fcenv data bfcl` writes unless told (--dest), and where data files that sit elsewhere
# find BFCL's shared files (function docs, long-context filler): the user's cache.
DEFAULT_DIR = Path.home() / ".cache" / "fcenv" / "bfcl"
_DATA_PREFIX = "bfcl_eval/data/"
_LONG_CONTEXT = "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/long_context.py"


def literal_constants(source: str) -> dict:
    """The ``NAME = <literal>`` assignments of a Python source file, evaluated as literals only."""
    constants = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            constants[node.targets[0].id] = ast.literal_eval(node.value)
    return constants


_ELLIPSIS = {"__python__": "Ellipsis"}


def _tag(value):
    """JSON has no Ellipsis; BFCL's watch-list filler ends with one, so keep it tagged."""
    if value is Ellipsis:
        return _ELLIPSIS
    if isinstance(value, list):
        return [_tag(v) for v in value]
    if isinstance(value, dict):
        return {k: _tag(v) for k, v in value.items()}
    return value


def _untag(value):
    if value == _ELLIPSIS:
        return Ellipsis
    if isinstance(value, list):
        return [_untag(v) for v in value]
    if isinstance(value, dict):
        return {k: _untag(v) for k, v in value.items()}
    return value


def load_long_context(path: Path) -> dict:
    """The filler constants written by ``extract_wheel``, with their Python values restored."""
    return _untag(json.loads(Path(path).read_text()))


def extract_wheel(wheel: Path, dest: Path) -> list[Path]:
    """Write the wheel's data files and ``long_context.json`` under ``dest``."""
    written = []
    if not zipfile.is_zipfile(wheel):
        raise RuntimeError(f"{wheel} is not a wheel (not a zip file)")
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        if _LONG_CONTEXT not in zf.namelist():
            raise RuntimeError(f"{wheel} is not a bfcl-eval wheel (no {_LONG_CONTEXT})")
        for name in zf.namelist():
            if name.startswith(_DATA_PREFIX) and not name.endswith("/"):
                target = dest / name[len(_DATA_PREFIX):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(name))
                written.append(target)
        constants = literal_constants(zf.read(_LONG_CONTEXT).decode("utf-8"))
    target = dest / "long_context.json"
    target.write_text(json.dumps(_tag(constants), ensure_ascii=False))
    written.append(target)
    return written


def download_wheel(version: str, into: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           f"bfcl-eval=={version}", "-d", str(into)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"pip could not download bfcl-eval=={version}:\n{proc.stderr[-2000:]}")
    wheels = sorted(into.glob("bfcl_eval-*.whl"))
    if not wheels:
        raise RuntimeError(f"pip downloaded no bfcl-eval wheel into {into}")
    return wheels[0]


def fetch_bfcl(dest: Path = DEFAULT_DIR, version: str = BFCL_VERSION, wheel: Path | None = None) -> list[Path]:
    """Fill ``dest`` with BFCL's data from the given wheel, or from one pip downloads."""
    with tempfile.TemporaryDirectory() as tmp:
        wheel = wheel or download_wheel(version, Path(tmp))
        staging = Path(tmp) / "data"
        extract_wheel(wheel, staging)
        # Swap in whole so an interrupted fetch never leaves a half-written folder behind.
        # A link left there (dangling or not) is replaced by a real folder, never followed.
        if dest.is_symlink():
            dest.unlink()
        elif dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staging, dest)
    return sorted(p for p in dest.rglob("*") if p.is_file())


def find_long_context(near: Path | None = None) -> Path:
    """``long_context.json`` beside the data file, else in ``DEFAULT_DIR``."""
    candidates = ([near / "long_context.json", near.parent / "long_context.json"] if near else [])
    candidates.append(DEFAULT_DIR / "long_context.json")
    for path in candidates:
        if path.exists():
            return path
    raise FileNotFoundError(
        "long-context filler data (long_context.json) not found in "
        + ", ".join(str(p.parent) for p in candidates)
        + "; run `python -m fcenv data bfcl` to fetch it"
    )
