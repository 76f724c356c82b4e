"""Small question files cut from BFCL's data, for the command-line tests."""

from __future__ import annotations

from pathlib import Path


def first_entries(bfcl_dir: Path, folder: Path, category: str, count: int) -> Path:
    """A question file of a BFCL category's first ``count`` entries, with their answers."""
    name = f"BFCL_v4_{category}.json"
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    for source, target in ((bfcl_dir / name, folder / name),
                           (bfcl_dir / "possible_answer" / name, folder / "possible_answer" / name)):
        if source.exists():
            target.write_text("".join(source.read_text().splitlines(keepends=True)[:count]))
    return folder / name
