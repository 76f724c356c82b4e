"""Web-search episodes: BFCL's web-search question, its tools on a search source.

One conversation of one turn, as BFCL plays it: the answer-format prompt and the question;
steps with calls run ``search_engine_query`` / ``fetch_url_content`` on the env's search source
(``fcenv.search``: a recorded snapshot or a local corpus), their results coming back as tool
messages; the first step without calls is the final answer, judged by BFCL's agentic checker;
more than ``max_steps_per_turn`` steps with calls end the episode without one (BFCL's force
quit, ``agentic:no_last_message``). The category says whether results show snippets
(``web_search_base``) or not (``web_search_no_snippet``).
"""

from __future__ import annotations

from typing import Any

from fcenv.agentic.episode import AgenticEpisode
from fcenv.multi_turn.executor import ToolSession
from fcenv.search import NEEDED


class WebSearchEpisode(AgenticEpisode):
    def _prepare(self) -> None:
        if self.settings.web_search is None:
            raise ValueError(f"entry {self.task.id!r} searches the web: give the env {NEEDED}")

    def _open(self, conversation: dict[str, Any]) -> tuple[ToolSession, list[dict[str, Any]]]:
        session = ToolSession([self.class_name], self.task.initial_config, backend_package=self.settings.backend_package)
        tools = session.instances[self.class_name]
        if hasattr(tools, "_use_source"):  # BFCL's own class (backend_package) goes to the live web
            tools._use_source(self.settings.web_search)
        return session, list(conversation["question"][0])
