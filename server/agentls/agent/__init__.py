"""The agent: the loop that asks the model, runs the tools it asks for and feeds the results
back (`loop.py`), the context budget (`context.py`), the system prompt (`prompt.py`),
project memory, `AGENTS.md` (`memory.py`), a task's result as JSON (`task_json.py`) and its
progress as JSON events (`event_progress.py`: `run -p`, a batch's trajectory). It knows no
door: it sees the world only through the small interfaces of `agentls.interfaces`
and the tool table of `agentls.tools`."""
