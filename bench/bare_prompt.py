"""A bare prompt_toolkit prompt: the baseline of the time to `agentls>`."""

from prompt_toolkit import PromptSession

if __name__ == "__main__":
    PromptSession[str]().prompt("agentls> ")
