"""Multi-turn episodes: executing calls on tool backends and judging turns by BFCL's rules.

Modules: ``executor`` (calls decoded into literal data and dispatched to the backends' public
methods), ``trajectory`` (one episode under BFCL's rules, step by step) and ``episode`` (the
env's multi-turn episode: the chat, announcements, rewards).
"""
