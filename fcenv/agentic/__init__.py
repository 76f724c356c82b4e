"""BFCL's agentic categories as episodes: memory and web search.

Modules: ``prompts`` (BFCL's answer-format and memory system prompts), ``loading`` (BFCL's
memory file as the entries of its three memory categories, with their scenarios' prerequisite
conversations; its web-search file as its two web-search categories), ``episode`` (the loop
both share, and the memory episode: prerequisites fill the memory, then the question),
``web_episode`` (the web-search episode, its tools on a search source of ``fcenv.search``) and
``recorded`` (BFCL's evaluation of a recorded agentic result). The backends live
in ``fcenv.backends`` (``memory_kv``, ``memory_vector``, ``memory_rec_sum``); the verdict is
``fcenv.checkers.agentic``'s.
"""
