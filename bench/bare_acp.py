"""A bare ACP agent on the protocol's Python SDK, answering `initialize` only: the baseline
of `agentls acp`'s start."""

import asyncio
from typing import Any

import acp
from acp.schema import InitializeResponse


class Bare:
    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)


if __name__ == "__main__":
    asyncio.run(acp.run_agent(Bare()))  # type: ignore[arg-type]
