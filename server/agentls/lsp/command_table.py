"""Every command of agentls's language server (`workspace/executeCommand`): its name, and
the module and function that carry it out. The server registers them all at start from this
light table; a command's module (the loop, the tools, background tasks, MCP, skills) is
imported at its first call, not while the editor waits for the `initialize` answer."""

from __future__ import annotations

RUN_TASK = "agent.runTask"
CANCEL = "agent.cancel"
NEW_SESSION = "agent.newSession"
COMPACT = "agent.compact"
STEER = "agent.steer"
CHECKPOINTS = "agent.checkpoints"
UNDO = "agent.undo"
SESSIONS = "agent.sessions"
RESUME_SESSION = "agent.resumeSession"
SET_MODE = "agent.setMode"
MCP_SERVERS = "agent.mcpServers"
SLASH_COMMANDS = "agent.commands"
CHAT = "agent.chat"
MODEL = "agent.model"
RUN_IN_BACKGROUND = "agent.runInBackground"
BACKGROUND_TASKS = "agent.backgroundTasks"
REVIEW = "agent.reviewBackgroundTask"
CANCEL_BACKGROUND = "agent.cancelBackgroundTask"
DISCARD = "agent.discardBackgroundTask"
LOG = "agent.backgroundTaskLog"

COMMANDS: dict[str, tuple[str, str]] = {
    RUN_TASK: ("commands", "run_task"),
    CANCEL: ("commands", "cancel"),
    NEW_SESSION: ("commands", "new_session"),
    COMPACT: ("commands", "compact"),
    CHECKPOINTS: ("commands", "checkpoints"),
    UNDO: ("commands", "undo_to"),
    SESSIONS: ("commands", "sessions"),
    RESUME_SESSION: ("commands", "resume_session"),
    STEER: ("commands", "steer"),
    CHAT: ("chat", "chat"),
    MODEL: ("chat", "model"),
    SET_MODE: ("commands", "set_mode"),
    MCP_SERVERS: ("commands", "mcp_server_list"),
    SLASH_COMMANDS: ("commands", "slash_commands"),
    RUN_IN_BACKGROUND: ("background", "run_in_background"),
    BACKGROUND_TASKS: ("background", "background_tasks"),
    REVIEW: ("background", "review_task"),
    CANCEL_BACKGROUND: ("background", "cancel_background"),
    DISCARD: ("background", "discard"),
    LOG: ("background", "task_log"),
}
"""Each command's name: (the module of `agentls.lsp`, the function), called `(server, *args)`."""
