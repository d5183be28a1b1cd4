"""conol's own numbers in the Prometheus registry LiteLLM's ``prometheus`` callback serves at
``/metrics`` (docs/metrics.md): one declaration per metric (``METRICS``), the docs table generated
from it (``litellm-conol metrics --write-docs docs/metrics.md``, kept fresh by a test).

Every metric is labelled by ``model`` (the model group a caller asked for; ``conol/<id>`` outside
the proxy) and ``deployment`` (the deployment's ``model_info.id``: LiteLLM's own ``model_id`` label),
a few by a bounded ``reason``, ``source`` or ``part``. Counters count per attempt (the Router's
retries each count what they spent); the account gauges hold the last value any worker saw. With
several workers LiteLLM sets ``PROMETHEUS_MULTIPROC_DIR`` and ``/metrics`` adds up every worker's
files: the gauges then take the most recent worker's value (``multiprocess_mode="mostrecent"``).

``prometheus_client`` comes with LiteLLM's proxy (our ``proxy`` extra); without it nothing is recorded.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..reuse.accounts import Seen

LABELS = ("model", "deployment")


@dataclass(frozen=True)
class Metric:
    """One metric: its Prometheus name, type, extra label (if any), and what it counts."""

    name: str
    kind: Literal["counter", "gauge"]
    doc: str
    label: str | None = None  # a label beyond model and deployment
    values: tuple[str, ...] = ()  # the values that label takes

    @property
    def labels(self) -> tuple[str, ...]:
        return (*LABELS, self.label) if self.label else LABELS


# The request fields (``usage_fields.request_fields``) each counter adds up, by metric name.
COUNTED_FIELDS = {
    "conol_sessions_created_total": "sessions_created",
    "conol_followup_turns_total": "followup_turns",
    "conol_repair_turns_total": "repair_turns",
    "conol_image_uploads_total": "image_uploads",
    "conol_image_url_fetches_total": "image_url_fetches",
    "conol_credit_errors_total": "credit_errors",
}

# fmt: off
METRICS = (
    Metric("conol_sessions_created_total", "counter",
           "conol sessions created (`POST /api/sessions`), repair turns and sessions replacing a refused "
           "follow-up included"),
    Metric("conol_followup_turns_total", "counter",
           "turns posted on an existing session (session reuse)"),
    Metric("conol_reuse_fallbacks_total", "counter",
           "follow-ups conol did not take, answered by a new session (or posted again: `not_taken`)",
           "reason", ("unsupported", "gone", "busy", "rejected", "not_taken")),
    Metric("conol_image_uploads_total", "counter",
           "images uploaded to conol (`POST /api/assets`); an image already uploaded is not counted again"),
    Metric("conol_image_url_fetches_total", "counter",
           "image URLs the proxy fetched (`image_fetch: public`)"),
    Metric("conol_repair_turns_total", "counter",
           "repair turns: sessions created because an answer or a tool call failed validation"),
    Metric("conol_credit_errors_total", "counter",
           "sessions conol ended with \"credit balance is too low\""),
    Metric("conol_requests_refused_total", "counter",
           "requests refused without a session: the same request is known to fail (`failure_memory`), "
           "the body set an operator's option (`settings_boundary`), the account rests (`account_rest`)",
           "reason", ("failure_memory", "settings_boundary", "account_rest")),
    Metric("conol_prompt_tokens_total", "counter",
           "prompt tokens of the answers, as conol reported them (`contextUsage`) or as we estimated them",
           "source", ("reported", "estimated")),
    Metric("conol_account_balance_credits", "gauge",
           "the deployment's account balance at its last read (`GET /api/billing/balance`)",
           "part", ("total", "daily", "subscription", "extra")),
    Metric("conol_account_next_refill_timestamp_seconds", "gauge",
           "when the account's daily credits refill next (`dailyRefilledAt` + 24 h), POSIX seconds"),
    Metric("conol_account_rest_until_timestamp_seconds", "gauge",
           "until when the account rests (out of credits, or below `min_balance`): requests go to the "
           "other deployments; 0 when it does not rest. Resting now: `> time()`"),
)
# fmt: on
BY_NAME = {metric.name: metric for metric in METRICS}


@dataclass(frozen=True)
class Labels:
    model: str
    deployment: str


_instruments: dict[str, Any] | None = None


def _registered() -> dict[str, Any]:
    """The metrics, made on first use in the default registry (what ``/metrics`` serves); empty
    without ``prometheus_client``."""
    global _instruments
    if _instruments is None:
        try:
            from prometheus_client import Counter, Gauge
        except ImportError:
            _instruments = {}
            return _instruments
        _instruments = {
            metric.name: (
                Counter(metric.name, metric.doc, metric.labels)
                if metric.kind == "counter"
                else Gauge(metric.name, metric.doc, metric.labels, multiprocess_mode="mostrecent")
            )
            for metric in METRICS
        }
    return _instruments


def record_request(labels: Labels, fields: Mapping[str, Any], seen: Seen | None) -> None:
    """One attempt's counts (``usage_fields.request_fields``), and what it saw of its account."""
    instruments = _registered()
    if not instruments:
        return
    by = (labels.model, labels.deployment)
    for name, field_name in COUNTED_FIELDS.items():
        if fields.get(field_name):
            instruments[name].labels(*by).inc(fields[field_name])
    if fields.get("reuse_fallback"):
        instruments["conol_reuse_fallbacks_total"].labels(*by, fields["reuse_fallback"]).inc()
    if fields.get("refused_by"):
        instruments["conol_requests_refused_total"].labels(*by, fields["refused_by"]).inc()
    for source in ("reported", "estimated"):
        tokens = fields.get(f"prompt_tokens_{source}")
        if tokens:
            instruments["conol_prompt_tokens_total"].labels(*by, source).inc(tokens)
    if seen is not None:
        _record_account(instruments, by, seen)


def _record_account(instruments: dict[str, Any], by: tuple[str, str], seen: Seen) -> None:
    rest = seen.rest.until if seen.rest is not None and seen.rest.until > time.time() else 0.0
    instruments["conol_account_rest_until_timestamp_seconds"].labels(*by).set(rest)
    balance = seen.balance
    if balance is None:
        return
    parts = {"total": balance.total, "daily": balance.daily}
    parts |= {"subscription": balance.subscription, "extra": balance.extra}
    for part, value in parts.items():
        if value is not None:
            instruments["conol_account_balance_credits"].labels(*by, part).set(value)
    if balance.next_refill is not None:
        instruments["conol_account_next_refill_timestamp_seconds"].labels(*by).set(balance.next_refill)


def metrics_table() -> str:
    """The docs table of every metric (docs/metrics.md), from ``METRICS``."""
    rows = ["| metric | type | labels | what it counts |", "|---|---|---|---|"]
    for metric in METRICS:
        labels = ", ".join(f"`{label}`" for label in metric.labels)
        if metric.values:
            labels += f" (`{metric.label}`: " + ", ".join(f"`{v}`" for v in metric.values) + ")"
        rows.append(f"| `{metric.name}` | {metric.kind} | {labels} | {metric.doc} |")
    return "\n".join(rows) + "\n"
