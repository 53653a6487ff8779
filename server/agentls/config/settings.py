"""The agentls settings object: typed, defaulted, and forgiving of bad values."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..completions import settings as completion_settings
from ..extensions.hooks import Hook, parse_hooks
from ..extensions.mcp_config import ServerSpec, parse_servers
from ..eyes.definitions import ServerDefinition
from ..eyes.definitions import parse_servers as parse_lsp_servers
from ..models.costs import Price
from ..models.providers import DEFAULT_MODEL, PROFILES
from ..permissions.modes import MODES, Mode, mode_of
from ..permissions.rules import Rules, parse_rules


@dataclass(frozen=True)
class SubagentLimits:
    """What bounds the subagents a task starts (the `agent` tool)."""

    max_depth: int = 1
    """How deep subagents nest: 1, the task's own may start none; 0, no `agent` tool."""
    max_parallel: int = 4
    """The `agent` calls of one turn that run at once; the others wait their turn."""
    max_steps: int = 25
    max_tokens: int = 200_000
    """Per subagent, prompt and output tokens as the outcome line counts them."""


_SUBAGENT_FIELDS = {
    "maxDepth": ("max_depth", 0, 5),
    "maxParallel": ("max_parallel", 1, 20),
    "maxSteps": ("max_steps", 1, 1000),
    "maxTokens": ("max_tokens", 1000, 100_000_000),
}


def _subagents(value: Any) -> SubagentLimits:
    if not isinstance(value, Mapping) or set(value) - set(_SUBAGENT_FIELDS):
        raise ValueError(f"expected an object with {', '.join(_SUBAGENT_FIELDS)}")
    limits: dict[str, int] = {}
    for key, number in value.items():
        name, low, high = _SUBAGENT_FIELDS[key]
        try:
            limits[name] = _int_in(low, high)(number)
        except ValueError as error:
            raise ValueError(f"{key}: {error}") from None
    return SubagentLimits(**limits)


@dataclass(frozen=True)
class SkillOptions:
    catalog_budget: int | None = None
    """Characters of the skills' catalog in the system prompt; None: 2 % of the context
    window's size, at most 8,000 (`extensions/skill_tool.budget`)."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    provider: str | None = None
    """None: AGENTLS_PROVIDER, else anthropic (providers.endpoint)."""
    base_url: str | None = None
    model: str | None = None
    models: tuple[str, ...] = ()
    """More model ids offered beside `model` by a client's model picker (ACP)."""
    max_steps: int = 50
    max_tokens: int = 16000
    approve_commands: Literal["ask", "always"] = "ask"
    allowed_commands: tuple[str, ...] = ()
    bash_timeout: float = 120.0
    output_limit: int = 30000
    request_timeout: float = 120.0
    context_window: int | None = None
    """None: the model's known window (providers.context_window)."""
    context_budget: float = 0.7
    prices: tuple[tuple[str, Price], ...] = ()
    sandbox: Literal["auto", "required", "off"] = "auto"
    sandbox_network: bool = False
    approved_commands_unsandboxed: bool = False
    pass_environment: tuple[str, ...] = ()
    plan_tool: bool = True
    permissions: Rules = field(default_factory=Rules)
    mode: Mode = "default"
    mcp_servers: tuple[ServerSpec, ...] = ()
    mcp_startup_timeout: float = 10.0
    mcp_call_timeout: float = 60.0
    mcp_auth_timeout: float = 120.0
    tool_search_threshold: int = 1500
    lsp_servers: tuple[ServerDefinition, ...] = ()
    hooks: tuple[Hook, ...] = ()
    subagents: SubagentLimits = field(default_factory=SubagentLimits)
    vision: bool | None = None
    """None: the provider profile's (providers.Profile.vision), resolved by prepare_task."""
    web_search: bool = False
    web_fetch_allow_hosts: tuple[str, ...] = ()
    web_fetch_timeout: float = 30.0
    skills: SkillOptions = field(default_factory=SkillOptions)
    plugins: tuple[str, ...] = ()
    background_setup: str | None = None
    background_max_running: int = 3
    background_keep_days: int = 7
    completions: completion_settings.CompletionSettings = field(
        default_factory=completion_settings.CompletionSettings
    )


def _int_in(low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"expected a whole number from {low} to {high}")
        return value

    return check


def _optional(check: Callable[[Any], int]) -> Callable[[Any], int | None]:
    """`check`, with null meaning the default."""
    return lambda value: None if value is None else check(value)


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 600:
        raise ValueError("expected seconds, more than 0 and at most 600")
    return float(value)


def _share(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.1 <= value <= 0.95:
        raise ValueError("expected a share of the context window from 0.1 to 0.95")
    return float(value)


def _prices(value: Any) -> tuple[tuple[str, Price], ...]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
        raise ValueError('expected {"model-id-prefix": {"input": 3, "output": 15}, ...}')
    return tuple((prefix, Price.parse(spec)) for prefix, spec in value.items())


def _model(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return value.strip() if value else None
    raise ValueError("expected a model id such as " + DEFAULT_MODEL)


def _models(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f'expected a list of model ids such as ["{DEFAULT_MODEL}"]')
    return tuple(dict.fromkeys(v.strip() for v in value))


def _provider(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value in PROFILES):
        return None if value is None else str(value)
    raise ValueError(f"expected one of {', '.join(PROFILES)}")


def _base_url(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.startswith(("http://", "https://"))):
        return value.rstrip("/") if value else None
    raise ValueError("expected an http:// or https:// URL")


def _approve(value: Any) -> Literal["ask", "always"]:
    if value == "ask" or value == "always":
        return "ask" if value == "ask" else "always"
    raise ValueError('expected "ask" or "always"')


def _sandbox(value: Any) -> Literal["auto", "required", "off"]:
    for choice in ("auto", "required", "off"):
        if value == choice:
            return choice
    raise ValueError('expected "auto", "required" or "off"')


def _command(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.strip()):
        return value.strip() if value else None
    raise ValueError("expected a command line, or null")


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _optional_flag(value: Any) -> bool | None:
    return None if value is None else _flag(value)


def _hosts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and v.strip() and "/" not in v for v in value
    ):
        raise ValueError('expected a list of host names, e.g. ["localhost", "intranet.example"]')
    return tuple(v.strip().lower().rstrip(".") for v in value)


def _prefixes(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError("expected a list of command prefixes")
    return tuple(v.strip() for v in value)


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _variable_names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and _VARIABLE_NAME.fullmatch(v) for v in value
    ):
        raise ValueError("expected a list of environment variable names")
    return tuple(value)


def _skill_options(value: Any) -> SkillOptions:
    if not isinstance(value, Mapping) or set(value) - {"catalogBudget"}:
        raise ValueError('expected {"catalogBudget": characters or null}')
    budget = value.get("catalogBudget")
    return SkillOptions(None if budget is None else _int_in(0, 100_000)(budget))


def _folders(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError("expected a list of folders")
    return tuple(value)


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One setting, defined once: what parses it, and what every editor and document shows
    of it (the VS Code contribution, the vimdoc and the README are checked against this by
    tests/config/test_settings_contract.py)."""

    key: str
    """The name in the settings object (camelCase)."""
    field: str
    """The attribute of `Settings`."""
    check: Callable[[Any], Any]
    """The value as `Settings` holds it, from the JSON value; raises ValueError."""
    schema: dict[str, Any]
    """JSON schema of the value, as VS Code's `contributes.configuration` takes it."""
    default: Any
    """The default as JSON (it checks to the `Settings` default)."""
    description: str
    """One or two sentences (markdown)."""
    user_only: bool = False
    """Whether only the user may set it, never a folder: it starts a program, lets commands run
    unasked, chooses where requests or commands go, or what is billed and what it is said to
    cost (VS Code scopes it to the application and ignores it in an untrusted folder)."""


_COMMAND_PREFIXES = "`;`, `&`, `|`, `` ` ``, `$`, `<`, `>`, brackets, a backslash or a line break"

_USER_ONLY = " User settings only: a workspace never chooses where your key goes."
_BILLED = " User settings only: a workspace never chooses what you are billed for, nor its cost."

SETTINGS: tuple[Setting, ...] = (
    Setting(
        key="provider",
        field="provider",
        check=_provider,
        schema={"type": ["string", "null"], "enum": [None, *PROFILES]},
        default=None,
        description=(
            "Where the model runs: `anthropic` or `openai` (the wire format), or a named profile "
            "(the README's Models section). `null` (default): the server's environment variable "
            "`AGENTLS_PROVIDER`, else `anthropic`." + _USER_ONLY
        ),
        user_only=True,
    ),
    Setting(
        key="baseUrl",
        field="base_url",
        check=_base_url,
        schema={"type": ["string", "null"]},
        default=None,
        description=(
            "The provider's endpoint, e.g. `http://localhost:11434` for Ollama. `null` (default): "
            "the profile's (for `anthropic` and `openai`, `ANTHROPIC_BASE_URL` or "
            "`OPENAI_BASE_URL` first)." + _USER_ONLY
        ),
        user_only=True,
    ),
    Setting(
        key="model",
        field="model",
        check=_model,
        schema={"type": ["string", "null"]},
        default=None,
        description=(
            "Model id. `null` (default): the server's environment variable `AGENTLS_MODEL`, "
            f"else `{DEFAULT_MODEL}` for the `anthropic` provider; every other provider needs one."
            + _BILLED
        ),
        user_only=True,
    ),
    Setting(
        key="models",
        field="models",
        check=_models,
        schema={"type": "array", "items": {"type": "string"}},
        default=[],
        description="More model ids to switch to in a session, beside `model`: an ACP client's "
        "model picker (Zed, VS Code's Agent Host, JetBrains) offers the model in use, then these."
        + _BILLED,
        user_only=True,
    ),
    Setting(
        key="maxSteps",
        field="max_steps",
        check=_int_in(1, 1000),
        schema={"type": "integer", "minimum": 1, "maximum": 1000},
        default=50,
        description="Model turns per task; reaching it ends the task with `step_limit`.",
    ),
    Setting(
        key="maxTokens",
        field="max_tokens",
        check=_int_in(1, 128000),
        schema={"type": "integer", "minimum": 1, "maximum": 128000},
        default=16000,
        description="Output tokens per model turn.",
    ),
    Setting(
        key="approveCommands",
        field="approve_commands",
        check=_approve,
        schema={
            "type": "string",
            "enum": ["ask", "always"],
            "enumDescriptions": [
                "Put each bash command to you: Allow / Allow for this task / Deny.",
                "Run commands without asking.",
            ],
        },
        default="ask",
        description="Whether the agent's bash commands need your approval.",
        user_only=True,
    ),
    Setting(
        key="allowedCommands",
        field="allowed_commands",
        check=_prefixes,
        schema={"type": "array", "items": {"type": "string"}},
        default=[],
        description=(
            'Command prefixes that never ask, e.g. `["git status", "pytest"]`. Matched word by '
            f"word; a command with {_COMMAND_PREFIXES} always asks, and so does one naming a path "
            "outside the workspace or with an option that writes or deletes (`--output`, `-o`, "
            "`--junitxml`, `-delete`, `-exec`, ...). They always run in the sandbox."
        ),
        user_only=True,
    ),
    Setting(
        key="bashTimeout",
        field="bash_timeout",
        check=_seconds,
        schema={"type": "number", "exclusiveMinimum": 0, "maximum": 600},
        default=120,
        description="Seconds before a command's whole process group is killed.",
    ),
    Setting(
        key="outputLimit",
        field="output_limit",
        check=_int_in(1000, 1_000_000),
        schema={"type": "integer", "minimum": 1000, "maximum": 1000000},
        default=30000,
        description=(
            "Characters of a tool result the model sees; longer output is cut in the middle."
        ),
    ),
    Setting(
        key="requestTimeout",
        field="request_timeout",
        check=_seconds,
        schema={"type": "number", "exclusiveMinimum": 0, "maximum": 600},
        default=120,
        description="Seconds a model request may stay silent before it is abandoned and retried.",
    ),
    Setting(
        key="contextWindow",
        field="context_window",
        check=_optional(_int_in(8_000, 2_000_000)),
        schema={"type": ["integer", "null"], "minimum": 8000, "maximum": 2000000},
        default=None,
        description=(
            "The model's context window in tokens. `null` (default): the known model's (200000 "
            "for Claude), else 128000 for an OpenAI-format provider; set it for a local model "
            "served with a smaller one."
        ),
    ),
    Setting(
        key="contextBudget",
        field="context_budget",
        check=_share,
        schema={"type": "number", "minimum": 0.1, "maximum": 0.95},
        default=0.7,
        description=(
            "Share of the context window the prompt may fill before the oldest tool results are "
            "replaced by a one-line note."
        ),
    ),
    Setting(
        key="prices",
        field="prices",
        check=_prices,
        schema={
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {
                    "input": {"type": "number"},
                    "output": {"type": "number"},
                    "cacheWrite": {"type": "number"},
                    "cacheRead": {"type": "number"},
                },
                "required": ["input", "output"],
            },
        },
        default={},
        description=(
            "Dollars per million tokens by model-id prefix, consulted before the built-in table, "
            'e.g. `{"claude-sonnet-5-5": {"input": 2, "output": 10}}`.' + _BILLED
        ),
        user_only=True,
    ),
    Setting(
        key="sandbox",
        field="sandbox",
        check=_sandbox,
        schema={
            "type": "string",
            "enum": ["auto", "required", "off"],
            "enumDescriptions": [
                "Sandboxed where bubblewrap works, else unsandboxed with a warning.",
                "Refuse to run bash without the sandbox.",
                "No sandbox.",
            ],
        },
        default="auto",
        description=(
            "Whether bash runs in a sandbox (bubblewrap on Linux): only the workspace writable "
            "(not `.git/hooks`, `.git/config`), private `/tmp`, no network, nothing it starts "
            "outlives it, no secret in its environment."
        ),
        user_only=True,
    ),
    Setting(
        key="sandboxNetwork",
        field="sandbox_network",
        check=_flag,
        schema={"type": "boolean"},
        default=False,
        description="Let sandboxed commands reach the network.",
        user_only=True,
    ),
    Setting(
        key="approvedCommandsUnsandboxed",
        field="approved_commands_unsandboxed",
        check=_flag,
        schema={"type": "boolean"},
        default=False,
        description=(
            "Run a command you allowed when shown it outside the sandbox. Commands that run "
            "without asking (`allowedCommands`, `approveCommands: always`, the rest of a task "
            "allowed as a whole) stay sandboxed."
        ),
        user_only=True,
    ),
    Setting(
        key="passEnvironment",
        field="pass_environment",
        check=_variable_names,
        schema={"type": "array", "items": {"type": "string"}},
        default=[],
        description=(
            "Names of environment variables, beyond the few every program gets (`PATH`, `HOME`, "
            "`USER`, `LANG`, `LC_*`, `TERM`, `SHELL`, `TZ`, `TMPDIR`, `XDG_*`), passed to the "
            'programs agentls starts: commands, hooks, MCP servers. E.g. `["JAVA_HOME", "GOPATH"]`.'
        ),
        user_only=True,
    ),
    Setting(
        key="planTool",
        field="plan_tool",
        check=_flag,
        schema={"type": "boolean"},
        default=True,
        description=(
            "Offer the model the `todo_write` tool, so it shows its plan for a task as a checklist "
            "(`agent/plan`); turn it off for a model that does not need one."
        ),
    ),
    Setting(
        key="permissions",
        field="permissions",
        check=parse_rules,
        schema={
            "type": "object",
            "properties": {
                kind: {"type": "array", "items": {"type": "string"}}
                for kind in ("allow", "ask", "deny")
            },
            "additionalProperties": False,
        },
        default={},
        description="Rules in Claude Code's syntax that decide tool calls: "
        '`{"allow": ["Bash(npm test:*)", "mcp__time__*"], "ask": ["Bash(git push:*)"], '
        '"deny": ["Read(.env)", "Edit(secrets/**)"]}`. deny wins over ask over allow; a '
        "repository's `.agentls/settings.json` may add deny and ask rules, never allow rules.",
        user_only=True,
    ),
    Setting(
        key="mode",
        field="mode",
        check=mode_of,
        schema={
            "type": "string",
            "enum": list(MODES),
            "enumDescriptions": list(MODES.values()),
        },
        default="default",
        description=(
            "The mode a session starts in: `default`, `acceptEdits` or `plan`; each door switches "
            "it while idle."
        ),
        user_only=True,
    ),
    Setting(
        key="mcpServers",
        field="mcp_servers",
        check=parse_servers,
        schema={"type": "object", "additionalProperties": {"type": "object"}},
        default={},
        description="MCP servers in Claude Code's shape: "
        '`{"time": {"command": "uvx", "args": ["mcp-server-time"]}}` or `{"type": "http", '
        '"url": "...", "headers": {...}}`; `${VAR}` and `${VAR:-default}` come from your '
        "environment. Their tools are `mcp__<server>__<tool>`. User settings only.",
        user_only=True,
    ),
    Setting(
        key="mcpStartupTimeout",
        field="mcp_startup_timeout",
        check=_seconds,
        schema={"type": "number", "exclusiveMinimum": 0, "maximum": 600},
        default=10,
        description=(
            "Seconds a task waits for MCP servers still starting; a slower one is left out of it."
        ),
    ),
    Setting(
        key="mcpCallTimeout",
        field="mcp_call_timeout",
        check=_seconds,
        schema={"type": "number", "exclusiveMinimum": 0, "maximum": 600},
        default=60,
        description="Seconds an MCP tool call may take before the model is told it timed out.",
    ),
    Setting(
        key="mcpAuthTimeout",
        field="mcp_auth_timeout",
        check=_seconds,
        schema={"type": "number", "exclusiveMinimum": 0, "maximum": 600},
        default=120,
        description="Seconds a sign-in to an MCP server waits for the browser to come back.",
    ),
    Setting(
        key="toolSearchThreshold",
        field="tool_search_threshold",
        check=_int_in(0, 1_000_000),
        schema={"type": "integer", "minimum": 0, "maximum": 1000000},
        default=1500,
        description=(
            "Tokens of MCP tool schemas past which the model is offered their names through "
            "`tool_search` instead, and loads a schema once it found the tool."
        ),
    ),
    Setting(
        key="lspServers",
        field="lsp_servers",
        check=parse_lsp_servers,
        schema={"type": "object", "additionalProperties": {"type": "object"}},
        default={},
        description="Language servers in Claude Code's `.lsp.json` shape, whose diagnostics "
        "come back after each edit outside an editor (`agentls run`, ACP, batch, background "
        'tasks): `{"pyright": {"command": "pyright-langserver", "args": ["--stdio"], '
        '"extensionToLanguage": {".py": "python"}}}`, with `env`, `initializationOptions`, '
        "`settings`, `startupTimeout` and `shutdownTimeout` (milliseconds), `disabled`. "
        "Without it, pyright (else basedpyright), ruff, typescript-language-server, gopls, "
        "rust-analyzer and clangd serve when on PATH. User settings only.",
        user_only=True,
    ),
    Setting(
        key="hooks",
        field="hooks",
        check=parse_hooks,
        schema={"type": "object"},
        default={},
        description="Commands run at `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, "
        "`SessionStart`, `PreCompact`, `SubagentStart` and `SubagentStop`, in Claude Code's "
        "format: "
        '`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": '
        '"./check.sh"}]}]}`. User settings only.',
        user_only=True,
    ),
    Setting(
        key="subagents",
        field="subagents",
        check=_subagents,
        schema={
            "type": "object",
            "properties": {
                "maxDepth": {"type": "integer", "minimum": 0, "maximum": 5},
                "maxParallel": {"type": "integer", "minimum": 1, "maximum": 20},
                "maxSteps": {"type": "integer", "minimum": 1, "maximum": 1000},
                "maxTokens": {"type": "integer", "minimum": 1000, "maximum": 100000000},
            },
            "additionalProperties": False,
        },
        default={"maxDepth": 1, "maxParallel": 4, "maxSteps": 25, "maxTokens": 200000},
        description=(
            "Bounds of the subagents the model starts with its `agent` tool: `maxDepth` how deep "
            "they nest (1: the task's own start none; 0: no `agent` tool), `maxParallel` how many "
            "of one turn run at once, `maxSteps` and `maxTokens` per subagent (its steps and "
            "tokens also count against the task's `maxSteps`)."
        ),
    ),
    Setting(
        key="vision",
        field="vision",
        check=_optional_flag,
        schema={"type": ["boolean", "null"]},
        default=None,
        description=(
            "Whether the model takes images (read_file of a PNG, JPEG, GIF or WebP; images you "
            "attach); `false` sends a one-line placeholder instead. `null` (default): the "
            "provider's profile says (true for `anthropic`, `openai` and `openrouter`)."
        ),
    ),
    Setting(
        key="webSearch",
        field="web_search",
        check=_flag,
        schema={"type": "boolean"},
        default=False,
        description="Offer the model Anthropic's `web_search` server tool (billed per search by "
        "Anthropic); only Anthropic's own API (the `anthropic` provider) runs it: with another "
        "provider the tool is not sent and the start says so. User settings only.",
        user_only=True,
    ),
    Setting(
        key="webFetch.allowHosts",
        field="web_fetch_allow_hosts",
        check=_hosts,
        schema={"type": "array", "items": {"type": "string"}},
        default=[],
        description="Hosts `web_fetch` may reach although they resolve to a loopback, private or "
        'link-local address, e.g. `["localhost", "wiki.intranet"]`; every other such address '
        "is refused. User settings only.",
        user_only=True,
    ),
    Setting(
        key="webFetch.timeout",
        field="web_fetch_timeout",
        check=_seconds,
        schema={"type": "number", "exclusiveMinimum": 0, "maximum": 600},
        default=30,
        description="Seconds one `web_fetch` may take in all: looking the host up, connecting, "
        "redirects and reading the page (not the time you take to answer its question); a page "
        "still arriving then is cut there, said in the result. User settings only.",
        user_only=True,
    ),
    Setting(
        key="skills",
        field="skills",
        check=_skill_options,
        schema={
            "type": "object",
            "properties": {
                "catalogBudget": {"type": ["integer", "null"], "minimum": 0, "maximum": 100000}
            },
            "additionalProperties": False,
        },
        default={},
        description=(
            "Agent Skills: `catalogBudget`, the characters of the skills' names and descriptions "
            "in the system prompt (`null`, the default: 2 % of the context window's size in "
            "tokens, at most 8000); over it, descriptions are shortened."
        ),
    ),
    Setting(
        key="plugins",
        field="plugins",
        check=_folders,
        schema={"type": "array", "items": {"type": "string"}},
        default=[],
        description=(
            "Plugin folders (Claude Code's `.claude-plugin/` or Agent Plugins' `plugin.json`) "
            "whose skills, commands, hooks and MCP servers you use, beside those `agentls plugin "
            "add` records in your settings file. User settings only: a plugin's hooks and servers "
            "run as yours."
        ),
        user_only=True,
    ),
    Setting(
        key="background.setup",
        field="background_setup",
        check=_command,
        schema={"type": ["string", "null"]},
        default=None,
        description=(
            "A command run in a background task's fresh worktree before the agent starts, e.g. "
            "`npm ci` or `uv sync`; always in the sandbox (not at all without one), like the "
            "agent's commands there. `null` (default): none."
        ),
    ),
    Setting(
        key="background.maxRunning",
        field="background_max_running",
        check=_int_in(1, 32),
        schema={"type": "integer", "minimum": 1, "maximum": 32},
        default=3,
        description=(
            "Background tasks that run at once on this machine; the others wait in the queue."
        ),
    ),
    Setting(
        key="background.keepDays",
        field="background_keep_days",
        check=_int_in(1, 365),
        schema={"type": "integer", "minimum": 1, "maximum": 365},
        default=7,
        description=(
            "Days a finished background task (its worktree and branch) is kept unless reviewed "
            "or discarded sooner; older ones are removed."
        ),
    ),
    Setting(
        key="completions",
        field="completions",
        check=completion_settings.parse,
        schema=completion_settings.SCHEMA,
        default=completion_settings.DEFAULT,
        description=completion_settings.DESCRIPTION + _BILLED,
        user_only=True,
    ),
)

_BY_KEY = {setting.key: setting for setting in SETTINGS}

USER_ONLY = frozenset(setting.key for setting in SETTINGS if setting.user_only)
"""What only the user sets: taken from the user's settings file or the editor's user
settings, never from a folder's settings nor from a client that could be anyone's."""


def with_user_only(settings: Settings, source: Settings) -> Settings:
    """`settings` with every user-only setting as `source` has it."""
    fields = [_BY_KEY[key].field for key in USER_ONLY]
    return replace(settings, **{name: getattr(source, name) for name in fields})


CLIENT_ONLY = {"trace", "server"}
"""Settings of the editor clients under the same section (`agentls.trace.server`, the
server command), none of the server's business."""


def checked(key: str, value: Any) -> Any:
    """`value` for the setting `key`, as the settings object would take it; raises ValueError."""
    return _BY_KEY[key].check(value)


RENAMED = {
    "backgroundSetup": "background.setup",
    "backgroundMaxRunning": "background.maxRunning",
    "backgroundKeepDays": "background.keepDays",
}
"""Names a setting had before it joined its group: still read, with a note to move it."""


def flattened(raw: Mapping[str, Any]) -> dict[str, Any]:
    """`{"webFetch": {"allowHosts": [...]}}` (a JSON file, a Lua table) as the dotted keys
    `webFetch.allowHosts` that VS Code's settings use: flattened before anything sorts the
    user-only keys out, so a nested one is never mistaken for another."""
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        nested = isinstance(value, Mapping) and key not in _BY_KEY
        if nested and any(name.startswith(f"{key}.") for name in _BY_KEY):
            flat.update((f"{key}.{inner}", item) for inner, item in value.items())
        else:
            flat[key] = value
    return flat


def parse(raw: Any) -> tuple[Settings, list[str]]:
    """Settings from the client's object; each bad value is reported and left at its default."""
    settings = Settings()
    if raw is None:
        return settings, []
    if not isinstance(raw, Mapping):
        return settings, ["agentls settings must be an object; using the defaults"]
    problems = []
    values: dict[str, Any] = {}
    given = flattened(raw)
    for key, value in given.items():
        if key in CLIENT_ONLY:
            continue
        if key in RENAMED:
            key, note = _renamed(key, given)
            problems.append(note)
            if key in given:  # the group's own value wins
                continue
        if key not in _BY_KEY:
            problems.append(f"unknown setting agentls.{key} is ignored")
            continue
        name = _BY_KEY[key].field
        try:
            values[name] = checked(key, value)
        except ValueError as error:
            default = getattr(settings, name)
            problems.append(f"agentls.{key}: {error}; using the default {default!r}")
    return replace(settings, **values), problems


def _renamed(old: str, given: Mapping[str, Any]) -> tuple[str, str]:
    """The setting's name now, and the note that says so (deprecated, still read)."""
    new = RENAMED[old]
    group, inner = new.split(".")
    used = f"agentls.{new} is also set and is used" if new in given else "it is still read"
    return new, (
        f"agentls.{old} is deprecated: write it as {inner} in the {group} group "
        f'(`"{group}": {{"{inner}": ...}}`, or agentls.{new}); {used}'
    )
