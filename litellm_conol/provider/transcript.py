"""The rendered conversation of a session, let go once its answer has begun.

Every create body holds the whole conversation rendered as text (``CreateSessionBody.messages``):
for an agent's turn, as much again as its history. It is needed to create the session and, until
the answer begins, for a retry with a new full session (a follow-up conol refused, an uploaded image
gone: ``provider/exchange.py``); repair turns render their own. Once any of the answer has arrived
nothing reads it again, and holding it would keep a copy of the conversation per open stream.
"""

from __future__ import annotations

from ..client.driver import SessionRun
from ..core.answer.assembler import Assembler
from ..core.config.options import ConolRequest


def answer_begun(assembler: Assembler) -> bool:
    """Text, reasoning or a client tool call has arrived: no new full session may replace this one."""
    return bool(assembler.final_text or assembler.final_reasoning or assembler.tool_calls)


def release_transcript(request: ConolRequest, run: SessionRun) -> None:
    """Empty the rendered conversation in place, for every holder of it (the request, the run, a
    pinned start posting the same parts)."""
    for body in (request.body, run.body):
        body.messages.clear()
