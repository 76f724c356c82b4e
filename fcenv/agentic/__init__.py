"""BFCL's agentic categories: the memory categories as episodes (web search is not offered).

Modules: ``prompts`` (BFCL's answer-format and memory system prompts), ``loading`` (BFCL's
memory file as the entries of its three memory categories, with their scenarios' prerequisite
conversations), ``episode`` (the env's memory episode: prerequisites fill the memory, then the
question) and ``recorded`` (BFCL's evaluation of a recorded agentic result). The backends live
in ``fcenv.backends`` (``memory_kv``, ``memory_vector``, ``memory_rec_sum``); the verdict is
``fcenv.checkers.agentic``'s.
"""
