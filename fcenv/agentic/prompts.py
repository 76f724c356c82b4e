"""BFCL's prompts for its agentic categories: the answer format it asks for, and the memory system
prompt (a scenario's role, how to use the memory, and what the core memory holds).

The texts are BFCL's (bfcl-eval 2026.3.23, ``constants/default_prompts.py``), character for
character, so that a model trained here is scored on the prompts it learned from.
"""

from __future__ import annotations

from typing import Any

# Asked of every agentic question (not of the memory categories' prerequisite conversations).
ANSWER_FORMAT = (
    "For your final answer to the user, you must respond in this format: {'answer': A short and precise "
    "answer to the question, 'context': A brief explanation of how you arrived at this answer or why it "
    "is correct}. If you do not know the answer, respond with {'answer': 'I do not know', 'context': 'I "
    "do not know'}. If you think the question cannot be properly answered, response with {'answer': 'I "
    "cannot answer this question', 'context': A short reason explaining why this question cannot be "
    "answered}.\n"
)

# The assistant's role in each memory scenario.
SCENARIO_ROLES = {
    "student": (
        "You are an academic-support assistant for college student. Remember key personal and academic "
        "details discussed across sessions, and draw on them to answer questions or give guidance."
    ),
    "customer": (
        "You are a general customer support assistant for an e-commerce platform. Your task is to "
        "understand and remember information that can be used to provide information about user "
        "inquiries, preferences, and offer consistent, helpful assistance over multiple interactions."
    ),
    "finance": (
        "You are a high-level executive assistant supporting a senior finance professional. Retain and "
        "synthesize both personal and professional information including facts, goals, prior decisions, "
        "and family life across sessions to provide strategic, context-rich guidance and continuity."
    ),
    "healthcare": (
        "You are a healthcare assistant supporting a patient across appointments. Retain essential "
        "medical history, treatment plans, and personal preferences to offer coherent, context-aware "
        "guidance and reminders."
    ),
    "notetaker": (
        "You are a personal organization assistant. Capture key information from conversations, like "
        "tasks, deadlines, and preferences, and use it to give reliable reminders and answers in future "
        "sessions."
    ),
}

# Backends with a core and an archival memory (kv, vector).
CORE_ARCHIVAL_INSTRUCTION = (
    "{scenario_setting}\n"
    "\n"
    "You have access to an advanced memory system, consisting of two memory types 'Core Memory' and "
    "'Archival Memory'. Both type of memory is persistent across multiple conversations with the user, "
    "and can be accessed in a later interactions. You should actively manage your memory data to keep "
    "track of important information, ensure that it is up-to-date and easy to retrieve to provide "
    "personalized responses to the user later.\n"
    "\n"
    "The Core memory is limited in size, but always visible to you in context. The Archival Memory has a "
    "much larger capacity, but will be held outside of your immediate context due to its size.\n"
    "\n"
    "Here is the content of your Core Memory from previous interactions:\n"
    "{memory_content}\n"
)

# The recursive-summarisation backend's one memory.
UNIFIED_INSTRUCTION = (
    "{scenario_setting}\n"
    "\n"
    "You have access to an advanced memory system, which is persistent across multiple conversations "
    "with the user, and can be accessed in a later interactions. You should actively manage your memory "
    "data to keep track of important information, ensure that it is up-to-date and easy to retrieve to "
    "provide personalized responses to the user later.\n"
    "\n"
    "Here is the content of your memory system from previous interactions:\n"
    "{memory_content}\n"
)


def memory_system_prompt(class_name: str, scenario: str, memory_content: str) -> str:
    """The memory system prompt of a conversation: the rec_sum backend gets the unified text, the
    others the core/archival one; ``memory_content`` is the backend's core-memory dump."""
    template = UNIFIED_INSTRUCTION if class_name.endswith("rec_sum") else CORE_ARCHIVAL_INSTRUCTION
    # str.replace, not str.format: the memory's text may hold braces.
    return template.replace("{scenario_setting}", SCENARIO_ROLES[scenario], 1).replace(
        "{memory_content}", memory_content, 1)


def with_memory_prompt(messages: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    """BFCL puts the memory prompt before a leading system message's text, else adds one."""
    messages = [dict(m) for m in messages]
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = prompt + "\n\n" + messages[0]["content"]
        return messages
    return [{"role": "system", "content": prompt}, *messages]
