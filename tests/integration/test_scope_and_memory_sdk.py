"""Through LiteLLM's SDK against the fake: a request that never validates costs at most two rounds of
sessions however often it is retried; callers (``user``) never share sessions or failures; and what
the usage log is told of each request (sessions created, follow-up turns, refusals)."""

from __future__ import annotations

import asyncio
from typing import Any

import litellm
import pydantic
import pytest
from litellm.exceptions import MidStreamFallbackError
from litellm.integrations.custom_logger import CustomLogger
from support.weather import OPENAI_TOOL as WEATHER

import litellm_conol
from litellm_conol.fake import Done, FakeConol, Preview, Scenario, ScenarioContext, SetStatus
from litellm_conol.provider.usage_fields import USAGE_FIELDS_KEY
from litellm_conol.reuse.store import clear_stores

litellm.suppress_debug_info = True
litellm_conol.register()

MODEL = "conol/claude-haiku-4-5"
pytestmark = pytest.mark.timeout(90)
ROUND = 3  # sessions per round: the first turn and max_repair_turns=2 repair turns


class Person(pydantic.BaseModel):
    name: str
    age: int


@pytest.fixture(scope="module")
def fake():
    with FakeConol() as server:
        yield server


@pytest.fixture
def conol(fake, monkeypatch):
    monkeypatch.setenv("CONOL_FAILURE_MEMORY_SECONDS", "300")
    fake.reset()
    clear_stores()
    yield fake
    clear_stores()


def request(fake: FakeConol, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": MODEL,
        "messages": [{"role": "user", "content": text}],
        "api_base": fake.base_url,
        "api_key": fake.token,
        **extra,
    }


async def attempt(kwargs: dict[str, Any], stream: bool) -> BaseException:
    """One client attempt that must fail; its error, as LiteLLM raised it (unwrapped)."""
    with pytest.raises((litellm.BadGatewayError, MidStreamFallbackError)) as caught:
        if stream:
            async for _ in await litellm.acompletion(**kwargs, stream=True):
                pass
        else:
            await litellm.acompletion(**kwargs)
    return getattr(caught.value, "original_exception", None) or caught.value


NEVER_VALID = {
    "structured": ("[[fake:json_never_valid]]", {"response_format": Person}),
    "tool call": ("[[fake:tool_args_invalid valid_after=99]]", {"tools": [WEATHER]}),
}
WHAT = {"structured": "the answer", "tool call": "a tool call's arguments"}


@pytest.mark.parametrize("stream", [False, True], ids=["non-streamed", "streamed"])
@pytest.mark.parametrize("kind", list(NEVER_VALID))
async def test_four_identical_requests_that_never_validate_cost_two_rounds(conol, kind, stream):
    marker, extra = NEVER_VALID[kind]
    kwargs = request(conol, f"Who? {kind} {stream} {marker}", **extra)
    errors, sessions = [], []
    for _ in range(4):
        errors.append(await attempt(kwargs, stream))
        sessions.append(len(conol.sessions))
    assert sessions == [ROUND, 2 * ROUND, 2 * ROUND, 2 * ROUND]
    assert [e.status_code for e in errors] == [502] * 4
    first, second, *refused = (str(e) for e in errors)
    assert f"{WHAT[kind]} failed validation (3 turn(s), max_repair_turns=2" in first
    assert "the same request failed validation in 2 rounds in a row" not in first
    assert "the same request failed validation in 2 rounds in a row, the one before " in second
    assert "refused without a conol session for the next 300 s; not retried" in second
    for message in refused:
        assert f"ConolException - refused without starting a conol session: {WHAT[kind]} failed" in message
        assert "failed validation in 2 rounds in a row" in message and message.endswith(" s ago)")
    # the SDKs' retry switch rides on the mapped exception from the second round on
    assert [(getattr(e, "litellm_response_headers", None) or {}).get("x-should-retry") for e in errors] == [
        None,
        "false",
        "false",
        "false",
    ]


def switchable_json(valid: dict[str, bool]) -> Scenario:
    """Answers valid JSON while ``valid["now"]``, else not JSON: one request's outcome, switched
    between attempts by the test."""

    def steps(ctx: ScenarioContext) -> list[Any]:
        text = '{"name": "Ada Lovelace", "age": 36}' if valid["now"] else "no JSON today"
        return [Preview(text), SetStatus("completed"), Done()]

    return Scenario("switchable_json", steps, description="valid JSON while the test says so")


async def test_a_request_that_validates_in_between_forgets_the_failure(conol):
    valid = {"now": False}
    conol.add_scenario(switchable_json(valid))
    kwargs = request(conol, "Who? [[fake:switchable_json]]", response_format=Person)
    assert "in a row" not in str(await attempt(kwargs, stream=False))
    valid["now"] = True
    answer = await litellm.acompletion(**kwargs)
    assert answer.choices[0].message.content == '{"name": "Ada Lovelace", "age": 36}'
    valid["now"] = False
    assert "in a row" not in str(await attempt(kwargs, stream=False))  # a first failure again
    assert "in a row" in str(await attempt(kwargs, stream=False))
    assert "refused without starting" in str(await attempt(kwargs, stream=False))
    assert len(conol.sessions) == ROUND + 1 + ROUND + ROUND


async def test_other_validation_settings_are_another_request(conol):
    """tool_validation and max_repair_turns decide validation but are not in the session body: a
    request refused with one setting runs with another (with validation off, it answers)."""
    marker, extra = NEVER_VALID["tool call"]
    kwargs = request(conol, f"Settings {marker}", tool_validation="error", **extra)
    for _ in range(3):
        await attempt(kwargs, stream=False)
    assert len(conol.sessions) == 2  # one turn per round: tool_validation 'error' repairs nothing
    assert "in a row" not in str(await attempt({**kwargs, "tool_validation": "repair"}, stream=False))
    assert len(conol.sessions) == 2 + ROUND
    answer = await litellm.acompletion(**{**kwargs, "tool_validation": "off"})
    assert answer.choices[0].message.tool_calls[0].function.arguments == '{"town": "Paris"}'


async def test_one_users_failures_never_refuse_another_users_request(conol):
    marker, extra = NEVER_VALID["structured"]
    alice = request(conol, f"Who? users {marker}", user="alice", **extra)
    for _ in range(3):
        await attempt(alice, stream=False)
    assert len(conol.sessions) == 2 * ROUND
    bob = await attempt({**alice, "user": "bob"}, stream=False)
    assert "refused without starting" not in str(bob)
    assert len(conol.sessions) == 3 * ROUND


async def test_two_users_with_the_same_conversation_never_share_a_session(conol):
    histories: dict[str, list[dict[str, Any]]] = {"alice": [], "bob": []}
    fields: dict[str, list[Any]] = {"alice": [], "bob": []}
    for text in ("[[fake:echo]] one", "two"):
        for user in ("alice", "bob"):  # interleaved, word for word the same
            histories[user].append({"role": "user", "content": text})
            response = await litellm.acompletion(
                **request(conol, "", user=user) | {"messages": histories[user]}
            )
            message = response.choices[0].message
            histories[user].append({"role": "assistant", "content": message.content})
            fields[user].append(message.provider_specific_fields["session_reused"])
    assert histories["alice"] == histories["bob"]
    assert fields == {"alice": [False, True], "bob": [False, True]}
    assert len(conol.sessions) == 2
    assert sorted(s.turns for s in conol.sessions.values()) == [2, 2]


# --- what the usage log is told ----------------------------------------------------------------


class Noted(CustomLogger):  # type: ignore[misc]
    """The handler's usage fields of each finished call, in order; ``arrived`` when ``want`` have."""

    def __init__(self, want: int) -> None:
        super().__init__()
        self.want = want
        self.rows: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def _note(self, kwargs: dict[str, Any]) -> None:
        self.rows.append(kwargs.get(USAGE_FIELDS_KEY))
        if len(self.rows) >= self.want:
            self.arrived.set()

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):  # type: ignore[no-untyped-def]
        self._note(kwargs)

    async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):  # type: ignore[no-untyped-def]
        self._note(kwargs)


@pytest.fixture
def noted(monkeypatch):
    def make(want: int) -> Noted:
        logger = Noted(want)
        monkeypatch.setattr(litellm, "callbacks", [logger])
        return logger

    return make


ROW = ("sessions_created", "followup_turns", "session_reused", "session_reuse_reason", "refused_by")


def row(created: int, followups: int, reused: bool, reason: str | None, refused_by: str | None) -> dict:
    return {
        "sessions_created": created,
        "followup_turns": followups,
        "session_reused": reused,
        "session_reuse_reason": reason,
        "refused_by": refused_by,
    }


async def test_the_usage_fields_count_sessions_turns_and_refusals(conol, noted):
    logger = noted(6)
    history = [{"role": "user", "content": "[[fake:echo]] hello"}]
    first = await litellm.acompletion(**request(conol, "") | {"messages": history})
    history += [{"role": "assistant", "content": first.choices[0].message.content}]
    history += [{"role": "user", "content": "again"}]
    await litellm.acompletion(**request(conol, "") | {"messages": history})
    marker, extra = NEVER_VALID["tool call"]
    for _ in range(3):
        await attempt(request(conol, f"Usage {marker}", **extra), stream=True)
    with pytest.raises(litellm.BadRequestError):
        await litellm.acompletion(**request(conol, "hi", n=2))
    await asyncio.wait_for(logger.arrived.wait(), 30)
    fresh = "no earlier turn to continue"
    assert [{key: fields[key] for key in ROW} for fields in logger.rows] == [
        row(1, 0, False, fresh, None),
        row(0, 1, True, "history matched", None),
        row(ROUND, 0, False, fresh, None),  # a round: the first turn and two repair turns
        row(ROUND, 0, False, fresh, None),
        row(0, 0, False, None, "failure_memory"),  # refused before reuse was even looked at
        row(0, 0, False, None, None),  # refused by build_request (n=2): not a remembered refusal
    ]
    # the repair turns of each round (docs/metrics.md), and the deployment outside a Router: none
    assert [fields["repair_turns"] for fields in logger.rows] == [0, 0, ROUND - 1, ROUND - 1, 0, 0]
    assert {fields["deployment"] for fields in logger.rows} == {""}
