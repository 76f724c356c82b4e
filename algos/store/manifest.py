"""Crash-safe files: fsync helpers and the checkpoint manifest.

A checkpoint is complete when its ``manifest.json`` exists and every file it lists has the
recorded size and sha256. The manifest is written last, after every other file has been
flushed to disk, so a folder without one is a write that did not finish; and a file that
changed or was cut short after the write is caught on load instead of surfacing as a torch
or pickle traceback.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1


class CheckpointError(ValueError):
    """A checkpoint (or the run it belongs to) cannot be used: names the folder, the file and why."""

    def __init__(self, folder: Path | str, file: str | None, problem: str):
        self.folder = Path(folder)
        self.file = file
        self.problem = problem
        where = f"checkpoint {self.folder}" + (f": {file}" if file else "")
        super().__init__(f"{where}: {problem}")


def fsync_path(path: Path) -> None:
    """Flush a file's or a folder's entry to disk (a folder's fsync makes its renames durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)


def write_manifest(folder: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Flush every file under ``folder`` and record it; the manifest goes last."""
    files = {}
    for path in _files_under(folder):
        fsync_path(path)
        files[path.relative_to(folder).as_posix()] = {"size": path.stat().st_size, "sha256": sha256_of(path)}
    manifest = {"format": MANIFEST_FORMAT, **info, "files": files}
    target = folder / MANIFEST
    with open(target, "w") as handle:
        handle.write(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    for sub in sorted({p.parent for p in _files_under(folder)} | {folder}, key=lambda p: -len(p.parts)):
        fsync_path(sub)
    return manifest


def read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise CheckpointError(folder, MANIFEST, "missing: the checkpoint is incomplete (its write never finished)")
    try:
        manifest = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(folder, MANIFEST, f"unreadable, not valid JSON ({exc})") from None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    well_formed = isinstance(files, dict) and all(
        isinstance(entry, dict) and isinstance(entry.get("size"), int) and isinstance(entry.get("sha256"), str)
        for entry in files.values())
    if not well_formed:
        raise CheckpointError(folder, MANIFEST, "malformed: expected {\"files\": {path: {\"size\": int, "
                                                "\"sha256\": str}}}")
    if manifest.get("format") != MANIFEST_FORMAT:
        raise CheckpointError(folder, MANIFEST, f"format {manifest.get('format')!r}, this version reads "
                                                f"format {MANIFEST_FORMAT}")
    return manifest


def verify_file(folder: Path, manifest: dict[str, Any], name: str) -> Path:
    """``folder/name`` if it is listed and matches its size and hash; else a ``CheckpointError``."""
    entry = manifest["files"].get(name)
    if entry is None:
        raise CheckpointError(folder, name, "not listed in the manifest")
    path = folder / name
    if not path.is_file():
        raise CheckpointError(folder, name, "missing (listed in the manifest)")
    size = path.stat().st_size
    if size != entry["size"]:
        how = "truncated" if size < entry["size"] else "longer than written"
        raise CheckpointError(folder, name, f"{how}: {size} bytes, the manifest says {entry['size']}")
    if sha256_of(path) != entry["sha256"]:
        raise CheckpointError(folder, name, "corrupt: its sha256 differs from the manifest's")
    return path


def verify_folder(folder: Path, required: list[str]) -> dict[str, Any]:
    """Check the manifest and every file it lists; ``required`` must be among them."""
    manifest = read_manifest(folder)
    for name in required:
        if name not in manifest["files"]:
            raise CheckpointError(folder, name, "not listed in the manifest: the checkpoint lacks this file")
    for name in sorted(manifest["files"]):
        verify_file(folder, manifest, name)
    return manifest
