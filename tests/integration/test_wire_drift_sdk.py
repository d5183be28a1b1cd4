"""Drifted event shapes through the SDK: a session of only unreadable events is a 502 naming the
shape; one unreadable event among readable ones is skipped."""

from __future__ import annotations

import litellm
import pytest
from support.events import msg, user_log

import litellm_conol
from litellm_conol.fake import CommitMessage, Done, Event, Scenario, SetStatus, Sleep

pytestmark = pytest.mark.timeout(30)


litellm_conol.register()


def _sdk(fake, marker: str) -> litellm.ModelResponse:
    return litellm.completion(
        model="conol/deepseek-v4-pro",
        messages=[{"role": "user", "content": marker}],
        api_base=fake.base_url,
        api_key=fake.token,
    )


def test_a_session_of_only_unreadable_events_is_a_502_naming_the_shape(conol_fake):
    odd = {"type": "history_delta", "stages": [{"id": "s", "preview": [{"type": "message", "content": 42}]}]}
    conol_fake.add_scenario(
        Scenario("odd", [Event(odd), Sleep(0.05), Event(odd), SetStatus("completed"), Done()])
    )
    with pytest.raises(litellm.BadGatewayError) as caught:
        _sdk(conol_fake, "[[fake:odd]]")
    message = str(caught.value)
    assert (
        "sent 2 event(s) of a shape this client cannot read and nothing readable: a history_delta event whose "
        in message
    )
    assert "stages.0.preview.0.content is int 42" in message and "litellm-conol doctor" in message


def test_one_unreadable_event_among_readable_ones_is_skipped(conol_fake):
    odd = {"type": "history_delta", "stages": 5}
    nested = {
        "type": "history_delta",
        "data": {"stages": [{"id": "x", "logs": [user_log()], "preview": [msg("Still")]}]},
    }
    steps = [Event(odd), Event(nested), Sleep(0.05), CommitMessage("Still read."), SetStatus("completed")]
    conol_fake.add_scenario(Scenario("mixed", steps))
    assert _sdk(conol_fake, "[[fake:mixed]]").choices[0].message.content == "Still read."
