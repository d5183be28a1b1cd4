"""Where a follow-up's new turn starts in its event stream, on the two shapes that could mislead it:

1. A turn-2 text that turn 1 quoted, on a fake whose follow-up stream replays the earlier turns, gets
   turn 2's answer (not turn 1's, whose user log holds the same words).
2. Cumulative snapshots of one stage holding every turn, Q1/A1/Q2 then Q1/A1/Q2/A2, give A2, not
   "A1\\n\\nA2" (docs/protocol.md#follow-up-turns: the follow-up turn continues the earlier stage).
"""

from __future__ import annotations

import litellm
import pytest

import litellm_conol
from litellm_conol.fake import BUILTINS, FakeConol, Scenario
from litellm_conol.reuse.store import clear_stores

litellm.suppress_debug_info = True
litellm_conol.register()

MODEL = "conol/claude-haiku-4-5"
pytestmark = pytest.mark.timeout(60)
# echo (the last message part, committed), its user log and answer in one stage whose every event
# repeats all its logs
ECHO_CUMULATIVE = Scenario("echo_cumulative", BUILTINS["echo"].steps, log_mode="cumulative")


@pytest.fixture(scope="module")
def server():
    with FakeConol(scenarios=[ECHO_CUMULATIVE]) as fake:
        yield fake


@pytest.fixture
def fake(server):
    server.reset()
    clear_stores()
    yield server
    clear_stores()


async def conversation(fake: FakeConol, *turns: str) -> list[tuple[str, bool]]:
    """Each turn's answer and whether it continued the session."""
    messages: list[dict] = []
    out = []
    for text in turns:
        messages.append({"role": "user", "content": text})
        response = await litellm.acompletion(
            model=MODEL, api_base=fake.base_url, api_key=fake.token, messages=messages
        )
        answer = response.choices[0].message.content
        fields = response.choices[0].message.provider_specific_fields or {}
        messages.append({"role": "assistant", "content": answer})
        out.append((answer, fields["session_reused"]))
    return out


@pytest.mark.parametrize("stage", ["new", "same"])
async def test_item_1_a_turn_two_that_turn_one_quoted_gets_turn_twos_answer(fake, stage):
    fake.configure(followup_replay=True, followup_stage=stage)
    first = '[[fake:echo]] She wrote "yes, continue" and left.'
    assert await conversation(fake, first, "yes, continue") == [(first, False), ("yes, continue", True)]
    assert len(fake.sessions) == 1


@pytest.mark.parametrize(("replay", "lag"), [(True, 0.0), (False, 0.0), (True, 0.3)])
async def test_item_2_cumulative_snapshots_of_the_same_stage_give_only_the_new_answer(fake, replay, lag):
    # lag: the earlier turn's terminal status lingers while the new turn plays (followup_status_lag)
    fake.configure(followup_stage="same", followup_replay=replay, followup_status_lag=lag)
    first = "[[fake:echo_cumulative]] A1"
    assert await conversation(fake, first, "A2") == [(first, False), ("A2", True)]
    session = fake.last_session
    logs = [
        [entry["content"].rsplit("\n", 1)[-1] for entry in stage["logs"]]
        for event in session.events
        if event.type == "history_delta"
        for stage in event.payload["stages"]
    ]
    assert logs[-1] == [first, first, "A2", "A2"]  # Q1/A1/Q2/A2 in the stage's last snapshot
