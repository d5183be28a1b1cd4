"""The floor of a custom provider: a ``CustomLLM`` that does no work of its own, for the agent-shaped
benchmark's ``floor/…`` rows. It streams the workload's answer (``bench/workload.py``, ``end=call``)
from memory at the fakes' pace: the text in ``n`` pieces ``delay`` s apart, the first after ``lead``,
then the ``Bash`` tool call; no HTTP, no parsing. Through the proxy, what it costs is what LiteLLM
itself spends on any custom provider (the ``/v1/messages`` adapter both ways, the stream wrapper,
logging): the part of ``conol/…``'s CPU that is not ours.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import litellm
from litellm.llms.custom_llm import CustomLLM
from litellm.types.utils import (
    ChatCompletionDeltaToolCall,
    Delta,
    Function,
    ModelResponseStream,
    StreamingChoices,
    Usage,
)

from litellm_conol.core.config.options import configured_catalog
from litellm_conol.fake import find_marker
from litellm_conol.provider.model_map import model_map_entries

from .fake_app import message_texts
from .workload import AGENT_CALL, AGENT_TOOL, Workload


class FloorLLM(CustomLLM):  # type: ignore[misc]
    async def astreaming(
        self, model: str, messages: list[Any], *args: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:
        marker = find_marker(message_texts(messages))
        work = Workload.from_params(marker[1] if marker else {})
        rid, created = f"chatcmpl-floor-{time.time_ns()}", int(time.time())

        def chunk(delta: Delta, finish: str | None = None) -> ModelResponseStream:
            choice = StreamingChoices(index=0, delta=delta, finish_reason=finish)
            return ModelResponseStream(id=rid, created=created, model=model, choices=[choice])

        await asyncio.sleep(work.lead)
        for i, piece in enumerate(work.pieces()):
            if i:
                await asyncio.sleep(work.hold if i == 1 and work.hold > 0 else work.delay)
            yield chunk(Delta(content=piece, role="assistant" if i == 0 else None))
        if work.end == "call":
            call = ChatCompletionDeltaToolCall(
                id=f"call_floor_{time.time_ns()}",
                type="function",
                index=0,
                function=Function(name=AGENT_TOOL, arguments=json.dumps(AGENT_CALL)),
            )
            yield chunk(Delta(content=None, tool_calls=[call]))
        # the usage on a chunk of its own before the finish, as conol's handler sends it: LiteLLM's
        # stream wrapper drops a custom provider's content-less finish chunk, and without usage it
        # counts the whole conversation's tokens itself
        summary = chunk(Delta(content=None, tool_calls=[_continuation()]) if work.end == "call" else Delta())
        summary.usage = Usage(
            prompt_tokens=1000, completion_tokens=work.chars // 4, total_tokens=1000 + work.chars // 4
        )
        yield summary
        yield chunk(Delta(content=None), finish="tool_calls" if work.end == "call" else "stop")


def _continuation() -> ChatCompletionDeltaToolCall:
    return ChatCompletionDeltaToolCall(index=0, function=Function(arguments=""))


floor_llm = FloorLLM()
# The model's metadata and prices as conol's: LiteLLM prices and logs the answer alike.
_CONOL = model_map_entries(configured_catalog())["conol/claude-haiku-4-5"]
litellm.register_model({"floor/claude-haiku-4-5": {**_CONOL, "litellm_provider": "floor"}})
