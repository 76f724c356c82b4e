"""What BFCL's leaderboard knows of the models it serves locally: the name it shows, its
link, organisation and licence, for each model name BFCL's model registry lists in
bfcl-eval 2026.3.23 (``bfcl_eval/constants/model_config.py``, ``local_inference_model_map``).
Facts written down here, not read from BFCL at run time (fcenv does not import bfcl-eval);
``tests/parity/test_score_card_parity.py`` holds every entry to BFCL's registry, and the set of
names to its locally served models, so a new bfcl-eval cannot leave them stale unseen.

BFCL's score card names a model by its registry entry: ``Qwen/Qwen3-8B`` shows as
"Qwen3-8B (Prompt)", ``Qwen/Qwen3-8B-FC`` as "Qwen3-8B (FC)". A name BFCL does not list (a
training run, Qwen2.5, any model of one's own) has no entry: BFCL's evaluation refuses such a
model, and fcenv's card shows it under the name it was given, with "N/A" for the link,
organisation and licence. BFCL's API models (priced per token) are not listed here either: fcenv
scores models it serves itself.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BfclModel:
    display_name: str  # the leaderboard's Model column: the model and its mode, "(Prompt)" or "(FC)"
    url: str
    org: str
    license: str


# name in BFCL's registry -> (display name, link, organisation, licence)
_FACTS: dict[str, tuple[str, str, str, str]] = {
    "deepseek-ai/DeepSeek-R1": ("DeepSeek-R1 (Prompt) (Local)", "https://huggingface.co/deepseek-ai/DeepSeek-R1", "DeepSeek", "MIT"),
    "google/gemma-3-1b-it": ("Gemma-3-1b-it (Prompt)", "https://blog.google/technology/developers/gemma-3/", "Google", "gemma-terms-of-use"),
    "google/gemma-3-4b-it": ("Gemma-3-4b-it (Prompt)", "https://blog.google/technology/developers/gemma-3/", "Google", "gemma-terms-of-use"),
    "google/gemma-3-12b-it": ("Gemma-3-12b-it (Prompt)", "https://blog.google/technology/developers/gemma-3/", "Google", "gemma-terms-of-use"),
    "google/gemma-3-27b-it": ("Gemma-3-27b-it (Prompt)", "https://blog.google/technology/developers/gemma-3/", "Google", "gemma-terms-of-use"),
    "google/functiongemma-270m-it-FC": ("FunctionGemma-270m-it (FC)", "https://ai.google.dev/gemma/docs/functiongemma", "Google", "gemma-terms-of-use"),
    "meta-llama/Llama-3.1-8B-Instruct-FC": ("Llama-3.1-8B-Instruct (FC)", "https://llama.meta.com/llama3", "Meta", "Meta Llama 3 Community"),
    "meta-llama/Llama-3.1-8B-Instruct": ("Llama-3.1-8B-Instruct (Prompt)", "https://llama.meta.com/llama3", "Meta", "Meta Llama 3 Community"),
    "meta-llama/Llama-3.1-70B-Instruct-FC": ("Llama-3.1-70B-Instruct (FC)", "https://llama.meta.com/llama3", "Meta", "Meta Llama 3 Community"),
    "meta-llama/Llama-3.1-70B-Instruct": ("Llama-3.1-70B-Instruct (Prompt)", "https://llama.meta.com/llama3", "Meta", "Meta Llama 3 Community"),
    "meta-llama/Llama-3.2-1B-Instruct-FC": ("Llama-3.2-1B-Instruct (FC)", "https://llama.meta.com/llama3", "Meta", "Meta Llama 3 Community"),
    "meta-llama/Llama-3.2-3B-Instruct-FC": ("Llama-3.2-3B-Instruct (FC)", "https://llama.meta.com/llama3", "Meta", "Meta Llama 3 Community"),
    "meta-llama/Llama-3.3-70B-Instruct-FC": ("Llama-3.3-70B-Instruct (FC)", "https://llama.meta.com/llama3", "Meta", "Meta Llama 3 Community"),
    "meta-llama/Llama-4-Scout-17B-16E-Instruct-FC": ("Llama-4-Scout-17B-16E-Instruct (FC)", "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E-Instruct", "Meta", "Meta Llama 4 Community"),
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8-FC": ("Llama-4-Maverick-17B-128E-Instruct-FP8 (FC)", "https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "Meta", "Meta Llama 4 Community"),
    "Salesforce/Llama-xLAM-2-70b-fc-r": ("xLAM-2-70b-fc-r (FC)", "https://huggingface.co/Salesforce/Llama-xLAM-2-70b-fc-r", "Salesforce", "cc-by-nc-4.0"),
    "Salesforce/Llama-xLAM-2-8b-fc-r": ("xLAM-2-8b-fc-r (FC)", "https://huggingface.co/Salesforce/Llama-xLAM-2-8b-fc-r", "Salesforce", "cc-by-nc-4.0"),
    "Salesforce/xLAM-2-32b-fc-r": ("xLAM-2-32b-fc-r (FC)", "https://huggingface.co/Salesforce/xLAM-2-32b-fc-r", "Salesforce", "cc-by-nc-4.0"),
    "Salesforce/xLAM-2-3b-fc-r": ("xLAM-2-3b-fc-r (FC)", "https://huggingface.co/Salesforce/xLAM-2-3b-fc-r", "Salesforce", "cc-by-nc-4.0"),
    "Salesforce/xLAM-2-1b-fc-r": ("xLAM-2-1b-fc-r (FC)", "https://huggingface.co/Salesforce/xLAM-2-1b-fc-r", "Salesforce", "cc-by-nc-4.0"),
    "mistralai/Ministral-8B-Instruct-2410": ("Ministral-8B-Instruct-2410 (FC)", "https://huggingface.co/mistralai/Ministral-8B-Instruct-2410", "Mistral AI", "Mistral AI Research License"),
    "microsoft/phi-4": ("Phi-4 (Prompt)", "https://huggingface.co/microsoft/phi-4", "Microsoft", "MIT"),
    "microsoft/Phi-4-mini-instruct": ("Phi-4-mini-instruct (Prompt)", "https://huggingface.co/microsoft/Phi-4-mini-instruct", "Microsoft", "MIT"),
    "microsoft/Phi-4-mini-instruct-FC": ("Phi-4-mini-instruct (FC)", "https://huggingface.co/microsoft/Phi-4-mini-instruct", "Microsoft", "MIT"),
    "ibm-granite/granite-3.2-8b-instruct": ("Granite-3.2-8B-Instruct (FC)", "https://huggingface.co/ibm-granite/granite-3.2-8b-instruct", "IBM", "Apache-2.0"),
    "ibm-granite/granite-3.1-8b-instruct": ("Granite-3.1-8B-Instruct (FC)", "https://huggingface.co/ibm-granite/granite-3.1-8b-instruct", "IBM", "Apache-2.0"),
    "ibm-granite/granite-4.0-350m": ("Granite-4.0-350m (FC)", "https://huggingface.co/ibm-granite/granite-4.0-350m", "IBM", "Apache-2.0"),
    "ibm-granite/granite-20b-functioncalling": ("Granite-20b-FunctionCalling (FC)", "https://huggingface.co/ibm-granite/granite-20b-functioncalling", "IBM", "Apache-2.0"),
    "MadeAgents/Hammer2.1-7b": ("Hammer2.1-7b (FC)", "https://huggingface.co/MadeAgents/Hammer2.1-7b", "MadeAgents", "cc-by-nc-4.0"),
    "MadeAgents/Hammer2.1-3b": ("Hammer2.1-3b (FC)", "https://huggingface.co/MadeAgents/Hammer2.1-3b", "MadeAgents", "qwen-research"),
    "MadeAgents/Hammer2.1-1.5b": ("Hammer2.1-1.5b (FC)", "https://huggingface.co/MadeAgents/Hammer2.1-1.5b", "MadeAgents", "cc-by-nc-4.0"),
    "MadeAgents/Hammer2.1-0.5b": ("Hammer2.1-0.5b (FC)", "https://huggingface.co/MadeAgents/Hammer2.1-0.5b", "MadeAgents", "cc-by-nc-4.0"),
    "THUDM/glm-4-9b-chat": ("GLM-4-9b-Chat (FC)", "https://huggingface.co/THUDM/glm-4-9b-chat", "THUDM", "glm-4"),
    "Qwen/Qwen3-0.6B-FC": ("Qwen3-0.6B (FC)", "https://huggingface.co/Qwen/Qwen3-0.6B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-0.6B": ("Qwen3-0.6B (Prompt)", "https://huggingface.co/Qwen/Qwen3-0.6B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-1.7B-FC": ("Qwen3-1.7B (FC)", "https://huggingface.co/Qwen/Qwen3-1.7B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-1.7B": ("Qwen3-1.7B (Prompt)", "https://huggingface.co/Qwen/Qwen3-1.7B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-4B-Instruct-2507-FC": ("Qwen3-4B-Instruct-2507 (FC)", "https://huggingface.co/Qwen/Qwen3-4B-Instruct-2507", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-4B-Instruct-2507": ("Qwen3-4B-Instruct-2507 (Prompt)", "https://huggingface.co/Qwen/Qwen3-4B-Instruct-2507", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-8B-FC": ("Qwen3-8B (FC)", "https://huggingface.co/Qwen/Qwen3-8B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-8B": ("Qwen3-8B (Prompt)", "https://huggingface.co/Qwen/Qwen3-8B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-14B-FC": ("Qwen3-14B (FC)", "https://huggingface.co/Qwen/Qwen3-14B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-14B": ("Qwen3-14B (Prompt)", "https://huggingface.co/Qwen/Qwen3-14B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-32B-FC": ("Qwen3-32B (FC)", "https://huggingface.co/Qwen/Qwen3-32B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-32B": ("Qwen3-32B (Prompt)", "https://huggingface.co/Qwen/Qwen3-32B", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-30B-A3B-Instruct-2507-FC": ("Qwen3-30B-A3B-Instruct-2507 (FC)", "https://huggingface.co/Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-30B-A3B-Instruct-2507": ("Qwen3-30B-A3B-Instruct-2507 (Prompt)", "https://huggingface.co/Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-235B-A22B-Instruct-2507-FC": ("Qwen3-235B-A22B-Instruct-2507 (FC)", "https://huggingface.co/Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen", "apache-2.0"),
    "Qwen/Qwen3-235B-A22B-Instruct-2507": ("Qwen3-235B-A22B-Instruct-2507 (Prompt)", "https://huggingface.co/Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen", "apache-2.0"),
    "X-Humanoid/Pelican1.0-VL-235B-A22B-FC": ("Pelican1.0-VL-235B-A22 (FC)", "https://huggingface.co/X-Humanoid/Pelican1.0-VL-235B-A22B-FC", "x-humanoid", "apache-2.0"),
    "X-Humanoid/Pelican1.0-VL-30B-A3B-FC": ("Pelican1.0-VL-30B-A3B (FC)", "https://huggingface.co/X-Humanoid/Pelican1.0-VL-30B-A3B-FC", "x-humanoid", "apache-2.0"),
    "Team-ACE/ToolACE-2-8B": ("ToolACE-2-8B (FC)", "https://huggingface.co/Team-ACE/ToolACE-2-8B", "Huawei Noah & USTC", "Apache-2.0"),
    "openbmb/MiniCPM3-4B": ("MiniCPM3-4B (Prompt)", "https://huggingface.co/openbmb/MiniCPM3-4B", "openbmb", "Apache-2.0"),
    "openbmb/MiniCPM3-4B-FC": ("MiniCPM3-4B-FC (FC)", "https://huggingface.co/openbmb/MiniCPM3-4B", "openbmb", "Apache-2.0"),
    "openbmb/MiniCPM-SALA-FC": ("MiniCPM-SALA (FC)", "https://huggingface.co/openbmb/MiniCPM-SALA", "openbmb", "Apache-2.0"),
    "watt-ai/watt-tool-8B": ("watt-tool-8B (FC)", "https://huggingface.co/watt-ai/watt-tool-8B/", "Watt AI Lab", "Apache-2.0"),
    "watt-ai/watt-tool-70B": ("watt-tool-70B (FC)", "https://huggingface.co/watt-ai/watt-tool-70B/", "Watt AI Lab", "Apache-2.0"),
    "ZJared/Haha-7B": ("Haha-7B", "https://huggingface.co/ZJared/Haha-7B", "TeleAI", "Apache 2.0"),
    "speakleash/Bielik-11B-v2.3-Instruct": ("Bielik-11B-v2.3-Instruct (Prompt)", "https://huggingface.co/speakleash/Bielik-11B-v2.3-Instruct", "SpeakLeash & ACK Cyfronet AGH", "Apache 2.0"),
    "NovaSky-AI/Sky-T1-32B-Preview": ("Sky-T1-32B-Preview (Prompt)", "https://huggingface.co/NovaSky-AI/Sky-T1-32B-Preview", "NovaSky-AI", "apache-2.0"),
    "tiiuae/Falcon3-10B-Instruct-FC": ("Falcon3-10B-Instruct (FC)", "https://huggingface.co/tiiuae/Falcon3-10B-Instruct", "TII UAE", "falcon-llm-license"),
    "tiiuae/Falcon3-7B-Instruct-FC": ("Falcon3-7B-Instruct (FC)", "https://huggingface.co/tiiuae/Falcon3-7B-Instruct", "TII UAE", "falcon-llm-license"),
    "tiiuae/Falcon3-3B-Instruct-FC": ("Falcon3-3B-Instruct (FC)", "https://huggingface.co/tiiuae/Falcon3-3B-Instruct", "TII UAE", "falcon-llm-license"),
    "tiiuae/Falcon3-1B-Instruct-FC": ("Falcon3-1B-Instruct (FC)", "https://huggingface.co/tiiuae/Falcon3-1B-Instruct", "TII UAE", "falcon-llm-license"),
    "uiuc-convai/CoALM-8B": ("CoALM-8B", "https://huggingface.co/uiuc-convai/CoALM-8B", "UIUC + Oumi", "Meta Llama 3 Community"),
    "uiuc-convai/CoALM-70B": ("CoALM-70B", "https://huggingface.co/uiuc-convai/CoALM-70B", "UIUC + Oumi", "Meta Llama 3 Community"),
    "uiuc-convai/CoALM-405B": ("CoALM-405B", "https://huggingface.co/uiuc-convai/CoALM-405B", "UIUC + Oumi", "Meta Llama 3 Community"),
    "katanemo/Arch-Agent-1.5B": ("Arch-Agent-1.5B", "https://huggingface.co/katanemo/Arch-Agent-1.5B", "katanemo", "katanemo-research"),
    "katanemo/Arch-Agent-3B": ("Arch-Agent-3B", "https://huggingface.co/katanemo/Arch-Agent-3B", "katanemo", "katanemo-research"),
    "katanemo/Arch-Agent-7B": ("Arch-Agent-7B", "https://huggingface.co/katanemo/Arch-Agent-7B", "katanemo", "katanemo-research"),
    "katanemo/Arch-Agent-32B": ("Arch-Agent-32B", "https://huggingface.co/katanemo/Arch-Agent-32B", "katanemo", "katanemo-research"),
    "BitAgent/BitAgent-8B": ("BitAgent-8B", "https://huggingface.co/BitAgent/BitAgent-8B/", "Bittensor", "Apache-2.0"),
    "BitAgent/BitAgent-Bounty-8B": ("BitAgent-Bounty-8B", "https://huggingface.co/BitAgent/BitAgent-Bounty-8B", "Bittensor", "Apache-2.0"),
    "ThinkAgents/ThinkAgent-1B": ("ThinkAgent-1B (FC)", "https://huggingface.co/ThinkAgents/ThinkAgent-1B", "ThinkAgents", "apache-2.0"),
    "phronetic-ai/RZN-T": ("RZN-T (Prompt)", "https://huggingface.co/phronetic-ai/RZN-T", "Phronetic AI", "apache-2.0"),
    "Nanbeige/Nanbeige4-3B-Thinking-2511": ("Nanbeige4-3B-Thinking-2511 (FC)", "https://huggingface.co/Nanbeige/Nanbeige4-3B-Thinking-2511", "Nanbeige", "apache-2.0"),
}
BFCL_MODELS: dict[str, BfclModel] = {name: BfclModel(*facts) for name, facts in _FACTS.items()}


def bfcl_model(name: str) -> BfclModel | None:
    """BFCL's entry for a model name, None when BFCL does not list it. BFCL looks a model up by
    its results folder's name with each ``_`` read back as ``/``; so is ``name`` here, which
    makes ``Qwen_Qwen3-8B`` (the folder) and ``Qwen/Qwen3-8B`` the same model."""
    return BFCL_MODELS.get(name.replace("_", "/"))
