"""What a failed follow-up post means (client/follow_up.py, docs/session-reuse.md#when-a-follow-up-fails):
a refusal of its kind, or the caller's usual error with whether conol may have taken the turn."""

from __future__ import annotations

from typing import Any

import pytest

from litellm_conol import AuthenticationFailed, ConolError, RateLimited, RequestTimeout, UpstreamError
from litellm_conol.client.follow_up import FollowUpRefused, FollowUpStart
from litellm_conol.core.protocol.follow_up import TurnBody
from litellm_conol.core.protocol.session_info import SessionInfo
from litellm_conol.core.protocol.stage_marks import SessionHistory, StageMark
from litellm_conol.core.protocol.turn_boundary import TurnBoundary
from litellm_conol.core.protocol.wire import TextPart


class Conol:
    """A transport whose follow-up post fails with ``error``; ``session_status``: what
    ``GET /api/sessions/<id>`` answers."""

    def __init__(self, error: ConolError | None, session_status: int = 200) -> None:
        self.error, self.session_status = error, session_status
        self.posts = 0
        self.looked_up: list[str] = []

    async def post_turn(self, session_id: str, body: TurnBody) -> None:
        self.posts += 1
        if self.error is not None:
            raise self.error

    async def get_raw(self, path: str, doing: str) -> tuple[int, bytes, dict[str, str]]:
        self.looked_up.append(path)
        return self.session_status, b"{}", {}

    async def set_model(self, session_id: str, body: dict[str, Any]) -> bool:
        return True


def start(reattach: bool = False) -> FollowUpStart:
    return FollowUpStart(
        session_id="s1",
        turn=TurnBody(messages=[TextPart(content="next")], timezone="UTC"),
        boundary=TurnBoundary(SessionHistory((StageMark("st", 1, "d"),))),
        model="m",
        effort="low",
        info=SessionInfo("s1", "m2", True),
        reattach=reattach,
    )


def http(status: int) -> ConolError:
    return UpstreamError(f"HTTP {status}", status_code=status)


@pytest.mark.parametrize(
    ("status", "session_status", "kind"),
    [
        (405, 200, "unsupported"),
        (501, 200, "unsupported"),
        (404, 200, "unsupported"),  # the session is there: the endpoint is not
        (404, 404, "gone"),
        (410, 200, "gone"),
        (409, 200, "busy"),
        (423, 200, "busy"),
        (400, 200, "rejected"),
        (422, 200, "rejected"),
    ],
)
async def test_a_refusal_by_its_meaning(status, session_status, kind):
    conol, follow_up = Conol(http(status), session_status), start()
    with pytest.raises(FollowUpRefused) as refused:
        await follow_up.open(conol)
    assert (refused.value.kind, refused.value.status_code, follow_up.posted) == (kind, status, "no")
    assert conol.looked_up == (["/api/sessions/s1"] if status == 404 else [])


@pytest.mark.parametrize(
    ("error", "posted"),
    [
        (RateLimited("slow down", status_code=429), "no"),
        (http(503), "no"),
        (http(500), "unknown"),
        (http(502), "unknown"),
        (http(504), "unknown"),
        (RequestTimeout("conol did not answer in time"), "unknown"),
        (AuthenticationFailed("dead token", status_code=401), "no"),
    ],
)
async def test_the_callers_usual_error_and_whether_conol_may_have_the_turn(error, posted):
    follow_up = start()
    with pytest.raises(type(error)) as raised:
        await follow_up.open(Conol(error))
    assert raised.value is error  # not wrapped: the caller's retry logic sees what it knows
    assert follow_up.posted == posted


async def test_a_taken_turn_reports_the_sessions_model():
    conol, follow_up = Conol(None), start()
    assert await follow_up.open(conol) == SessionInfo("s1", "m2", True)
    assert (conol.posts, follow_up.posted) == (1, "yes")


async def test_a_reattach_reads_and_never_posts():
    conol, follow_up = Conol(None), start(reattach=True)
    assert await follow_up.open(conol) == SessionInfo("s1", "m2", True)
    assert conol.posts == 0
