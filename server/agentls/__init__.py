"""agentls: a coding agent (an LLM, a few tools and a loop) served to editors over LSP."""

__version__ = "0.1.0"
