"""What a result says beyond the OpenAI fields (``provider_specific_fields``), and its finish reason."""

from __future__ import annotations

from typing import Any

from ..core.answer.assembler import Assembler
from ..core.protocol.event_fields import ContextUsage, reported_model
from ..core.protocol.session_info import RunStats, SessionInfo

PROVIDER_NAME = "conol"


def finish_reason(assembler: Assembler) -> str:
    if assembler.tool_calls:
        return "tool_calls"
    return "length" if assembler.cut is not None and assembler.cut.reason == "length" else "stop"


def session_fields(info: SessionInfo | None) -> dict[str, Any]:
    if info is None:
        return {}
    return {
        "session_id": info.session_id,
        "effective_model": info.effective_model,
        "model_downgraded": info.model_downgraded,
    }


def result_fields(
    info: SessionInfo | None,
    assembler: Assembler,
    stats: RunStats,
    *,
    requested: str | None = None,
    usage_reported: bool = False,
) -> dict[str, Any]:
    """Everything a proxy client may want to know beyond the OpenAI fields. ``requested``: the
    ``agentModel`` sent, to tell whether ``contextUsage.modelId`` names another model."""
    fields = session_fields(info) | {
        "usage": "reported" if usage_reported else "estimated",
        "usage_estimated": not usage_reported,
        "builtin_tools": [use.as_dict() for use in assembler.builtin_tools],
        "ended_by": stats.ended_by,
        "status_polls": stats.status_polls,
    }
    fields |= context_fields(assembler.context_usage, requested)
    if assembler.window_resets:
        fields["window_resets"] = assembler.window_resets  # events dropped (their meaning is unknown)
    if assembler.dropped_calls:
        # The model called a tool that tool_choice excluded: not returned, but not hidden either.
        fields["dropped_tool_calls"] = [use.as_dict() for use in assembler.dropped_calls]
    if assembler.tool_calls and assembler.final_text:
        fields["text_with_tool_calls"] = assembler.final_text  # content is null; keep the text
    if assembler.answer.rewritten:
        # Streamed deltas cannot be taken back: say so, and give the final text.
        fields["rewritten"] = True
        fields["final_content"] = assembler.final_text
    return fields


def context_fields(context: ContextUsage | None, requested: str | None) -> dict[str, Any]:
    """What ``contextUsage`` adds: its numbers, and ``modelId`` as the model that ran (a downgrade
    the create answer did not report shows up here)."""
    if context is None:
        return {}
    fields: dict[str, Any] = {
        "context_used_tokens": context.used_tokens,
        "context_window": context.context_window,
    }
    model, other = reported_model(requested or "", context)
    if model is not None:
        fields["effective_model"] = model
        fields["model_reported"] = model
        if requested is not None and other:
            fields["model_downgraded"] = True
    return fields
