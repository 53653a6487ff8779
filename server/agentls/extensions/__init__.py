"""The user's extensions of the agent, in the shapes Claude Code made common: MCP servers
(`mcp_servers.py`, their tools as `mcp__<server>__<tool>`; `tool_search.py` when their schemas
would swamp the prompt), hooks around tool calls and tasks (`hooks.py`), where their programs run
(`programs.py`: the user's on the host, the repository's in the sandbox), skills and `/`
commands (`skills.py`, `commands.py`, `skill_tool.py`: the catalog and the `skill` tool),
plugins that bundle them (`plugins.py`), and the per-project trust that a repository's own
servers, hooks, skills and commands need before they count (`trust.py`). Their settings are
this part's own (`settings.py`).

It may import `config/`, `permissions/`, `shell/` (the sandbox, process groups), `disk/state`
(where trust is remembered), `tools/base` and `interfaces`; never the assembled settings
(`agentls/settings/`), nor a door or the loop, which
reach it through `interfaces.Hooks` and the tools in `ToolContext`."""
