"""What the provider's own tools did in a turn, shown as the user sees agentls's tools.

Anthropic's `web_search` runs on the API's side: the answer carries a `server_tool_use`
block (the query), a `web_search_tool_result` (the pages found) and text whose
`citations` name the pages it quotes. Nothing here runs; the steps are reported after the
turn, and the sources the text cites follow it in the transcript.
"""

from __future__ import annotations

from typing import Any

from ..interfaces import Block, Progress


def _results(block: Block) -> tuple[bool, str, str]:
    """Whether the search worked, one line for the user, and the list of pages found."""
    content = block.get("content")
    if isinstance(content, dict):  # an error: {"type": "web_search_tool_result_error", ...}
        code = content.get("error_code", "error")
        return False, f"the search failed ({code})", ""
    pages = [page for page in content or [] if isinstance(page, dict)]
    lines = [f"- {page.get('title') or page.get('url')}: {page.get('url')}" for page in pages]
    return True, f"{len(pages)} pages found", "\n".join(lines)


def _sources(content: list[Block]) -> list[str]:
    """The pages the turn's text cites, each once, in the order first cited."""
    seen: dict[str, str] = {}
    for block in content:
        for citation in block.get("citations") or []:
            if isinstance(citation, dict) and citation.get("url"):
                seen.setdefault(str(citation["url"]), str(citation.get("title") or ""))
    return [
        f"[{n}] {title + ' ' if title else ''}<{url}>"
        for n, (url, title) in enumerate(seen.items(), 1)
    ]


def report_server_tools(content: list[Block], progress: Progress) -> None:
    queries: dict[str, str] = {}
    for block in content:
        kind = block.get("type")
        if kind == "server_tool_use":
            arguments: Any = block.get("input") or {}
            query = str(arguments.get("query", "")) if isinstance(arguments, dict) else ""
            queries[str(block.get("id"))] = query
            progress.step(str(block.get("name", "web_search")), query)
        elif kind == "web_search_tool_result":
            query = queries.get(str(block.get("tool_use_id")), "")
            ok, detail, found = _results(block)
            progress.step_done("web_search", query, ok, detail, found)
    sources = _sources(content)
    if sources:
        progress.text("\n\nSources:\n" + "\n".join(sources) + "\n")
