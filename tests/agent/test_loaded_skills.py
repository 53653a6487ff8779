"""A loaded skill's instructions hold for the whole task: the context budget never elides
them, and a compaction's summary carries them whole."""

from __future__ import annotations

from agentls.agent.compaction import compact
from agentls.agent.context import ContextBudget
from agentls.agent.conversation import Conversation, tool_result
from agentls.interfaces import Turn

LOADED = '<skill_content name="pdf">\n' + "PDF BODY " * 100 + "\n</skill_content>"


def _with_a_loaded_skill() -> Conversation:
    conversation = Conversation()
    conversation.add_user([{"type": "text", "text": "fill the form"}])
    for number, (name, result) in enumerate([("skill", LOADED), ("read_file", "x " * 500)]):
        call = {"type": "tool_use", "id": f"t{number}", "name": name, "input": {}}
        conversation.messages.append({"role": "assistant", "content": [call]})
        conversation.add_user([tool_result(f"t{number}", result, False)])
    conversation.messages.append({"role": "assistant", "content": [{"type": "text", "text": "."}]})
    conversation.add_user([{"type": "text", "text": "go on"}])
    return conversation


def test_the_budget_elides_other_results_but_not_a_skills() -> None:
    conversation = _with_a_loaded_skill()
    removed = ContextBudget(1.0).fit(conversation.messages, 10_000, 10)
    assert removed > 0
    assert conversation.messages[2]["content"][0]["content"] == LOADED
    assert "elided" in conversation.messages[4]["content"][0]["content"]


async def test_a_loaded_skills_body_survives_compaction() -> None:
    conversation = _with_a_loaded_skill()

    async def ask() -> Turn:
        return Turn([{"type": "text", "text": "We filled half the form."}], "end_turn")

    result = await compact(conversation, ask, None)
    assert result.status == "done"
    [message] = conversation.messages
    summary = message["content"][0]["text"]
    assert "We filled half the form." in summary and LOADED in summary
