"""The LSP adapter: agentls as a language server."""
