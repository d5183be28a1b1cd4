"""One usage-log line (``litellm_conol.usage_log.usage_record``) from what LiteLLM hands a callback:
who asked (as the standard logging object has it), and what the handler noted of the request
(sessions created, follow-up turns, reuse, refusals), on success and on failure alike."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from litellm.types.utils import Usage

from litellm_conol.client.assets import ImageTally
from litellm_conol.provider.usage import RequestUsage
from litellm_conol.provider.usage_fields import USAGE_FIELDS_KEY, request_fields
from litellm_conol.reuse.accounts import Seen
from litellm_conol.usage_log import usage_record

METADATA = {
    "user_api_key_hash": "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b",
    "user_api_key_alias": "ci-key",
    "user_api_key_team_id": "team-red",
    "user_api_key_user_id": "u-42",
    "user_api_key_end_user_id": "alice",
}
PAYLOAD = {
    "metadata": METADATA,
    "end_user": "alice",
    "model_group": "chat",
    "model": "conol/claude-haiku-4-5",
    "prompt_tokens": 10,
    "completion_tokens": 5,
    "response_cost": 0.001,
}


def kwargs(noted: dict[str, Any] | None, **payload: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"standard_logging_object": {**PAYLOAD, **payload}}
    if noted is not None:
        out[USAGE_FIELDS_KEY] = noted
    return out


def test_who_asked_is_read_as_the_standard_logging_object_has_it():
    record = usage_record(kwargs(request_fields(None)), None, "success")
    assert record is not None
    assert {k: record[k] for k in ("user", "key_hash", "key_alias", "team_id", "user_id")} == {
        "user": "alice",
        "key_hash": METADATA["user_api_key_hash"],
        "key_alias": "ci-key",
        "team_id": "team-red",
        "user_id": "u-42",
    }


def test_a_refusal_is_logged_with_what_refused_it_and_no_session():
    noted = {
        "sessions_created": 0,
        "followup_turns": 0,
        "session_reused": False,
        "session_reuse_reason": None,
        "refused_by": "failure_memory",
    }
    record = usage_record(
        kwargs(noted, error_str="refused without starting a conol session: …"), None, "failure"
    )
    assert record is not None
    assert {k: record[k] for k in noted} == noted
    assert (record["outcome"], record["error"]) == ("failure", "refused without starting a conol session: …")


def test_without_noted_fields_reuse_comes_from_the_response_and_counts_are_unknown():
    fields = {"session_reused": True, "session_reuse_reason": "history matched"}
    message = SimpleNamespace(provider_specific_fields=fields)
    response = SimpleNamespace(choices=[SimpleNamespace(message=message)])
    record = usage_record(kwargs(None), response, "success")
    assert record is not None
    assert (record["sessions_created"], record["followup_turns"], record["refused_by"]) == (None, None, None)
    assert (record["session_reused"], record["session_reuse_reason"]) == (True, "history matched")


def test_a_request_the_handler_never_ran_has_zero_sessions():
    class Refusal(Exception):
        refused_by = "settings_boundary"

    assert request_fields(None, Refusal()) == {
        "sessions_created": 0,
        "followup_turns": 0,
        "repair_turns": 0,
        "image_uploads": 0,
        "image_url_fetches": 0,
        "credit_errors": 0,
        "session_reused": False,
        "session_reuse_reason": None,
        "reuse_fallback": None,
        "prompt_tokens_estimated": None,
        "prompt_tokens_reported": None,
        "account_resting": False,
        "balance_left": None,
        "refused_by": "settings_boundary",
    }
    assert request_fields(None, ValueError())["refused_by"] is None


def test_a_line_takes_the_noted_fields_so_a_later_line_of_the_same_call_counts_only_what_came_after(
    tmp_path,
):
    """The proxy's Router retries on one logging object, logged at a failed attempt and again at
    the answer: the second line must not count the first attempt's sessions again."""
    import json

    from litellm_conol.usage_log import UsageLogger

    logger = UsageLogger(str(tmp_path / "usage.jsonl"))
    call = kwargs(request_fields(None) | {"sessions_created": 3})
    logger._write(call, None, "failure")
    call[USAGE_FIELDS_KEY] = request_fields(None) | {"sessions_created": 1}
    logger._write(call, None, "success")
    lines = [json.loads(line) for line in (tmp_path / "usage.jsonl").read_text().splitlines()]
    assert [(line["outcome"], line["sessions_created"]) for line in lines] == [("failure", 3), ("success", 1)]
    assert USAGE_FIELDS_KEY not in call


def test_attempts_on_one_logging_object_add_up_until_a_line_takes_them():
    from litellm_conol.provider.usage_fields import noting

    def exchange(sessions: int) -> Any:
        runs = [SimpleNamespace(info=object(), start=None) for _ in range(sessions)]
        reuse = SimpleNamespace(fields=lambda: {"session_reused": False, "session_reuse_reason": "x"})
        usage = RequestUsage(Usage(prompt_tokens=5), prompt_estimated=5, prompt_reported=0)
        return SimpleNamespace(
            runs=runs,
            reuse=reuse,
            replaced=[],
            images=ImageTally(uploads=1),
            fallbacks=[],
            account=SimpleNamespace(seen=Seen()),
            request=SimpleNamespace(model="claude-haiku-4-5"),
            usage_split=lambda: usage,
        )

    call = {"logging_obj": SimpleNamespace(model_call_details={})}
    for sessions in (3, 3):
        with noting(call) as noted:
            noted.exchange = exchange(sessions)
    noted = call["logging_obj"].model_call_details[USAGE_FIELDS_KEY]
    assert (noted["sessions_created"], noted["image_uploads"], noted["repair_turns"]) == (6, 2, 4)
    assert (noted["prompt_tokens_estimated"], noted["deployment"]) == (5, "")  # the last attempt's
