"""`agentls acp`: the agent served over the Agent Client Protocol (stdio), for Zed,
JetBrains IDEs, Emacs agent-shell, CodeCompanion and avante.nvim."""
