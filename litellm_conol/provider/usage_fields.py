"""What a request cost upstream beyond LiteLLM's own logging: for the usage log
(docs/team-deployment.md#usage-log-and-spend), every LiteLLM logging integration and the operator's
metrics (docs/metrics.md).

The handler notes them on LiteLLM's logging object of the call (``litellm_compat.call_details``),
which every callback receives as ``kwargs``, on success and on failure alike: a failed request has no
response object to carry ``provider_specific_fields``, and its exception reaches callbacks mapped to
a LiteLLM class. The same fields go into LiteLLM's standard logging payload, under
``metadata.spend_logs_metadata.conol``: the one place of that payload a provider can add to, which
OpenTelemetry, Langfuse, S3/GCS logs and the spend logs all carry. Each attempt's own counts go to
the Prometheus metrics (``metrics.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..client.follow_up import FollowUpStart
from ..core.errors import OutOfCredits
from .exchange import Exchange
from .litellm_compat import call_details
from .metrics import Labels, record_request

USAGE_FIELDS_KEY = "litellm_conol_usage"  # the key in the callbacks' kwargs
PAYLOAD_KEY = "conol"  # the key under the standard logging payload's metadata.spend_logs_metadata
# The counts a retried request's attempts add up (the others are the last attempt's).
SUMMED = (
    "sessions_created",
    "followup_turns",
    "repair_turns",
    "image_uploads",
    "image_url_fetches",
    "credit_errors",
)


def request_fields(exchange: Exchange | None, error: BaseException | None = None) -> dict[str, Any]:
    """After a request answered or failed (``error``): the conol sessions it created (repair turns
    and the new session replacing a refused follow-up included), the turns it posted on existing
    sessions, whether it continued a session and why (not), and what refused it without a session;
    its repair turns, image uploads and fetches, credit errors and prompt tokens (estimated or
    reported), and what it saw of its account (resting, balance left)."""
    if exchange is None:
        return {**_nothing_spent(), "refused_by": getattr(error, "refused_by", "") or None}
    runs = exchange.runs
    started = [*exchange.replaced, *runs]
    followups = [isinstance(run.start, FollowUpStart) for run in started if run.info is not None]
    reuse = exchange.reuse.fields()
    split = exchange.usage_split() if error is None else None
    seen = exchange.account.seen
    return {
        "sessions_created": followups.count(False),
        "followup_turns": followups.count(True),
        "session_reused": reuse.get("session_reused", False),
        "session_reuse_reason": reuse.get("session_reuse_reason") or None,
        "refused_by": getattr(error, "refused_by", "") or None,
        "repair_turns": max(len(runs) - 1, 0),
        "image_uploads": exchange.images.uploads,
        "image_url_fetches": exchange.images.url_fetches,
        "reuse_fallback": exchange.fallbacks[-1] if exchange.fallbacks else None,
        "credit_errors": int(isinstance(error, OutOfCredits)),
        "prompt_tokens_estimated": split.prompt_estimated if split is not None else None,
        "prompt_tokens_reported": split.prompt_reported if split is not None else None,
        "account_resting": seen.resting,
        "balance_left": seen.balance.total if seen.balance is not None else None,
    }


def _nothing_spent() -> dict[str, Any]:
    """The fields of a request refused before its exchange began (the settings boundary)."""
    return {
        **dict.fromkeys(SUMMED, 0),
        "session_reused": False,
        "session_reuse_reason": None,
        "reuse_fallback": None,
        "prompt_tokens_estimated": None,
        "prompt_tokens_reported": None,
        "account_resting": False,
        "balance_left": None,
    }


@dataclass
class Noted:
    """The request being noted: set ``exchange`` once it exists."""

    exchange: Exchange | None = None


@contextmanager
def noting(kwargs: Mapping[str, Any]) -> Iterator[Noted]:
    """Note the request's fields on the way out, answered or failed (the error re-raised)."""
    noted = Noted()
    error: BaseException | None = None
    try:
        yield noted
    except BaseException as exc:
        error = exc
        raise
    finally:
        fields = request_fields(noted.exchange, error)
        exchange = noted.exchange
        labels = labels_of(kwargs, f"conol/{exchange.request.model}" if exchange is not None else "")
        record_request(labels, fields, exchange.account.seen if exchange is not None else None)
        details = call_details(kwargs.get("logging_obj"))
        if details is not None:
            noted_fields = _added(details.get(USAGE_FIELDS_KEY), {**fields, "deployment": labels.deployment})
            details[USAGE_FIELDS_KEY] = noted_fields
            _into_payload(details, noted_fields)


def labels_of(kwargs: Mapping[str, Any], model: str) -> Labels:
    """The metric labels of a call: the model group the Router routed it for (``model`` outside the
    proxy) and the deployment's ``model_info.id`` (``""`` outside a Router)."""
    litellm_params = kwargs.get("litellm_params")
    litellm_params = litellm_params if isinstance(litellm_params, Mapping) else {}
    model_info = litellm_params.get("model_info")
    deployment = model_info.get("id") if isinstance(model_info, Mapping) else None
    for name in ("metadata", "litellm_metadata"):
        metadata = litellm_params.get(name)
        group = metadata.get("model_group") if isinstance(metadata, Mapping) else None
        if isinstance(group, str) and group:
            model = group
            break
    return Labels(model=model, deployment=str(deployment or ""))


def _into_payload(details: dict[str, Any], fields: dict[str, Any]) -> None:
    """The fields under ``metadata.spend_logs_metadata.conol`` of the call's ``litellm_params``,
    which LiteLLM's standard logging payload is built from after the call. The dict is copied, never
    changed in place: it may be the caller's key's own metadata."""
    litellm_params = details.get("litellm_params")
    if not isinstance(litellm_params, dict):
        return
    name = next(
        (n for n in ("metadata", "litellm_metadata") if isinstance(litellm_params.get(n), dict)), None
    )
    if name is None:
        name = "metadata"
        litellm_params[name] = {}
    metadata = litellm_params[name]
    earlier = metadata.get("spend_logs_metadata")
    metadata["spend_logs_metadata"] = {
        **(earlier if isinstance(earlier, Mapping) else {}),
        PAYLOAD_KEY: fields,
    }


def _added(earlier: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """The proxy's Router retries a request on one logging object: the sessions, turns, uploads and
    credit errors of the attempts since the usage log last wrote a line of it (it takes the fields
    when it does) add up; reuse, refusal and the account are the last attempt's."""
    if isinstance(earlier, Mapping):
        for name in SUMMED:
            fields[name] += int(earlier.get(name) or 0)
    return fields
