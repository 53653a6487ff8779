"""What the provider's own tools did in a turn, shown as the user sees agentls's tools.

Anthropic's `web_search` runs on the API's side: the answer carries a `server_tool_use`
block (the query), a `web_search_tool_result` (the pages found) and text whose
`citations` name the pages it quotes. Nothing here runs; the steps are reported after the
turn, each search with every page it found (the step's result), those the text cites marked
with their number in the sources that follow the text in the transcript.
"""

from __future__ import annotations

from typing import Any

from ..interfaces import Block, Progress


def _results(block: Block, cited: dict[str, int]) -> tuple[bool, str, str]:
    """Whether the search worked, one line for the user, and every page found, one a line,
    a cited one marked `[n]` as the sources list numbers it."""
    content = block.get("content")
    if isinstance(content, dict):  # an error: {"type": "web_search_tool_result_error", ...}
        code = content.get("error_code", "error")
        return False, f"the search failed ({code})", ""
    pages = [page for page in content or [] if isinstance(page, dict)]
    lines = []
    for page in pages:
        url = str(page.get("url") or "")
        mark = f"[{cited[url]}]" if url in cited else "-"
        lines.append(f"{mark} {page.get('title') or url} <{url}>")
    quoted = sum(str(page.get("url") or "") in cited for page in pages)
    detail = f"{len(pages)} pages found" + (f", {quoted} cited" if quoted else "")
    return True, detail, "\n".join(lines)


def _cited(content: list[Block]) -> dict[str, str]:
    """The pages the turn's text cites (url: title), each once, in the order first cited."""
    seen: dict[str, str] = {}
    for block in content:
        for citation in block.get("citations") or []:
            if isinstance(citation, dict) and citation.get("url"):
                seen.setdefault(str(citation["url"]), str(citation.get("title") or ""))
    return seen


def report_server_tools(content: list[Block], progress: Progress) -> None:
    cited = _cited(content)
    numbers = {url: n for n, url in enumerate(cited, 1)}
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
            ok, detail, found = _results(block, numbers)
            progress.step_done("web_search", query, ok, detail, found)
    if cited:
        sources = [
            f"[{n}] {title + ' ' if title else ''}<{url}>"
            for n, (url, title) in enumerate(cited.items(), 1)
        ]
        progress.text("\n\nSources:\n" + "\n".join(sources) + "\n")
