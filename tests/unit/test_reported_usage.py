"""Usage reported from ``contextUsage`` instead of estimated, and ``modelId`` as the model that ran:
the pure mapping (``core.protocol.event_fields.turn_usage`` / ``reported_model``) and the fields the provider adds."""

from __future__ import annotations

from litellm_conol.core.answer.assembler import Assembler
from litellm_conol.core.protocol.event_fields import ContextUsage, TurnUsage, reported_model, turn_usage
from litellm_conol.core.protocol.session_info import RunStats, SessionInfo
from litellm_conol.core.protocol.wire import parse_event
from litellm_conol.provider.result_fields import result_fields

INFO = SessionInfo("ses_1", None, False)


def test_used_tokens_is_the_total_the_answer_estimate_the_completion_the_rest_the_prompt():
    assert turn_usage(ContextUsage(1000, 200000, "m"), 0, 120) == TurnUsage(880, 120, reported=True)
    assert turn_usage(ContextUsage(1000, None, None), 0, 120).total_tokens == 1000
    # an answer estimated above what conol counted cannot make the prompt negative
    assert turn_usage(ContextUsage(50, None, None), 0, 80) == TurnUsage(0, 50, reported=True)


def test_without_used_tokens_both_are_the_estimates():
    for context in (None, ContextUsage(None, 200000, "m"), ContextUsage(0, 200000, None)):
        assert turn_usage(context, 300, 40) == TurnUsage(300, 40, reported=False)


def test_the_reported_model_compared_without_vendor_prefix_or_case():
    assert reported_model("deepseek/deepseek-v4-pro", ContextUsage(1, None, "DeepSeek-V4-Pro")) == (
        "DeepSeek-V4-Pro",
        False,
    )
    assert reported_model("claude-fable-5", ContextUsage(1, None, "claude-haiku-4-5")) == (
        "claude-haiku-4-5",
        True,
    )
    assert reported_model("x", ContextUsage(1, None, None)) == (None, False)
    assert reported_model("x", None) == (None, False)


def _assembler(*payloads: str) -> Assembler:
    assembler = Assembler()
    for payload in payloads:
        event = parse_event(payload)
        assert event is not None
        assembler.feed(event)
    return assembler


def test_fields_say_reported_and_surface_the_model_that_ran():
    assembler = _assembler(
        '{"type":"done","contextUsage":{"usedTokens":42,"contextWindow":200000,"modelId":"claude-haiku-4-5"}}'
    )
    fields = result_fields(INFO, assembler, RunStats(), requested="claude-fable-5", usage_reported=True)
    assert {k: fields[k] for k in ("usage", "usage_estimated", "context_used_tokens", "context_window")} == {
        "usage": "reported",
        "usage_estimated": False,
        "context_used_tokens": 42,
        "context_window": 200000,
    }
    assert (fields["effective_model"], fields["model_reported"], fields["model_downgraded"]) == (
        "claude-haiku-4-5",
        "claude-haiku-4-5",
        True,
    )


def test_fields_without_context_usage_stay_as_before():
    fields = result_fields(INFO, _assembler('{"type":"done"}'), RunStats(), requested="claude-fable-5")
    assert (fields["usage"], fields["usage_estimated"], fields["model_downgraded"]) == (
        "estimated",
        True,
        False,
    )
    assert "context_used_tokens" not in fields and "model_reported" not in fields
    assert "window_resets" not in fields


def test_dropped_window_resets_are_counted_in_the_fields():
    reset = '{"type":"history_delta","windowReset":true,"stages":[{"id":"r","preview":[{"type":"message","content":"x"}]}]}'
    fields = result_fields(INFO, _assembler(reset, reset), RunStats())
    assert fields["window_resets"] == 2
