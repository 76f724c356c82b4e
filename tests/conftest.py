from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption(
        "--oracle-python",
        default=str(ROOT / ".oracle-venv" / "bin" / "python"),
        help="interpreter of the venv holding the reference checker (bfcl-eval)",
    )
    parser.addoption(
        "--require-oracle",
        action="store_true",
        help="fail, rather than skip, the parity tests when the oracle venv is missing (CI)",
    )
    parser.addoption(
        "--verl-python",
        default=str(ROOT / ".verl-venv" / "bin" / "python"),
        help="interpreter of the venv holding verl and this package (fcenv.verl's tests run in it)",
    )
    parser.addoption(
        "--require-verl",
        action="store_true",
        help="fail, rather than skip, fcenv.verl's tests when the verl venv is missing (CI)",
    )
    parser.addoption(
        "--require-vllm",
        action="store_true",
        help="fail, rather than skip, the vllm rollout engine's tests when vLLM is missing (CI)",
    )
    parser.addoption(
        "--models-dir",
        default=None,
        help="folder of the real models `make models` fetches (default: ~/.cache/fcenv/models)",
    )
    parser.addoption(
        "--bfcl-dir",
        default=None,
        help="folder with BFCL's data (default: ../shared/bfcl, else datasets/bfcl, else ~/.cache/fcenv/bfcl)",
    )


@pytest.fixture(scope="session")
def bfcl_dir(request) -> Path:
    given = request.config.getoption("--bfcl-dir")
    from fcenv.bfcl_data import DEFAULT_DIR

    candidates = [Path(given)] if given else [ROOT.parent / "shared" / "bfcl", ROOT / "datasets" / "bfcl", DEFAULT_DIR]
    for path in candidates:
        if (path / "BFCL_v4_simple_python.json").exists():
            return path
    pytest.fail(
        "BFCL data not found in " + ", ".join(map(str, candidates)) + "; run `python -m fcenv data bfcl`"
    )


@pytest.fixture(scope="session")
def oracle(request):
    from harness.oracle import Oracle

    python = Path(request.config.getoption("--oracle-python"))
    if not python.exists():
        message = f"reference checker venv not found at {python}; run `make oracle`"
        if request.config.getoption("--require-oracle"):
            pytest.fail(message)
        pytest.skip(message)
    return Oracle(python)


@pytest.fixture(scope="session")
def verl_python(request) -> Path:
    python = Path(request.config.getoption("--verl-python"))
    if not python.exists():
        message = f"verl venv not found at {python}; run `make verl`"
        if request.config.getoption("--require-verl"):
            pytest.fail(message)
        pytest.skip(message)
    return python


@pytest.fixture(scope="session")
def vllm_ready(request) -> str:
    """The interpreter the vllm engine runs with (.vllm-venv's, `make vllm`), checked to hold vLLM."""
    from fcenv.algos.rollout.vllm import default_python, vllm_missing

    python = default_python()
    missing = vllm_missing(python)
    if missing:
        if request.config.getoption("--require-vllm"):
            pytest.fail(missing)
        pytest.skip(missing)
    return python


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """The folder of the tests' tiny model (harness/tiny_test_model.py), built once per session."""
    import torch

    from fcenv.algos.tiny.build import build_tiny
    from harness.tiny_test_model import TEST_SPEC

    torch.set_num_threads(1)  # as the trainer runs; two test workers on two cores would oversubscribe
    return build_tiny(tmp_path_factory.getbasetemp() / "tiny-cache", TEST_SPEC, log=lambda message: None)


def _real_model(request, name: str) -> Path:
    """A real model's folder from `make models`; its tests fail, never skip, when it is missing."""
    from fcenv.pretrained import DEFAULT_DIR, PRETRAINED, is_current

    folder = Path(request.config.getoption("--models-dir") or DEFAULT_DIR) / name
    if not is_current(folder, PRETRAINED[name]):
        pytest.fail(f"the real model {name} is not in {folder.parent} (or not as pinned); run `make models`")
    return folder


@pytest.fixture(scope="session")
def qwen_coder(request) -> Path:
    """Qwen2.5-Coder-0.5B-Instruct as a checkpoint folder (its tokenizer's template renders tools)."""
    return _real_model(request, "qwen2.5-coder-0.5b-instruct")


@pytest.fixture(scope="session")
def minilm(request) -> Path:
    """all-MiniLM-L6-v2, the vector memory's sentence encoder."""
    return _real_model(request, "all-minilm-l6-v2")


@pytest.fixture(scope="session")
def smollm2(request) -> Path:
    """SmolLM2-135M-Instruct as a checkpoint folder (ChatML; its template ignores tools)."""
    return _real_model(request, "smollm2-135m-instruct")


@pytest.fixture(scope="session")
def qwen3_tokenizer(request) -> Path:
    """Qwen3's tokenizer folder (template with tools and <think>)."""
    return _real_model(request, "qwen3-tokenizer")


@pytest.fixture(scope="session")
def llama31_tokenizer(request) -> Path:
    """Llama 3.1's tokenizer folder (a Llama 3 template without tools)."""
    return _real_model(request, "llama3.1-tokenizer")
