"""conol's metrics (docs/metrics.md): one declaration, Prometheus naming, the docs table generated from
it, what one attempt records, and the per-request fields in LiteLLM's standard logging payload."""

from __future__ import annotations

import re
from types import SimpleNamespace

from prometheus_client import REGISTRY
from support.paths import ROOT

from litellm_conol.core.protocol.account import read_balance
from litellm_conol.ops.metrics_doc import page_with_metrics
from litellm_conol.provider.metrics import (
    COUNTED_FIELDS,
    LABELS,
    METRICS,
    Labels,
    metrics_table,
    record_request,
)
from litellm_conol.provider.usage_fields import PAYLOAD_KEY, _into_payload, labels_of
from litellm_conol.reuse.accounts import Rest, Seen

SNAKE = re.compile(r"conol_[a-z]+(_[a-z]+)*")


def test_the_metrics_page_holds_the_table_generated_from_the_declaration():
    page = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert page == page_with_metrics(page), "run: litellm-conol metrics --write-docs docs/metrics.md"
    for metric in METRICS:
        assert f"| `{metric.name}` | {metric.kind} |" in metrics_table()


def test_names_and_labels_follow_prometheus_conventions():
    for metric in METRICS:
        assert SNAKE.fullmatch(metric.name), metric.name
        assert metric.name.endswith("_total") == (metric.kind == "counter"), metric.name  # counters only
        assert metric.labels[:2] == LABELS == ("model", "deployment")
        assert (metric.label is None) == (not metric.values)  # an extra label takes a bounded set
        if "timestamp" in metric.name:
            assert metric.name.endswith("_timestamp_seconds")  # base unit, and says it is a time
    assert set(COUNTED_FIELDS) <= {metric.name for metric in METRICS}
    assert len({metric.name for metric in METRICS}) == len(METRICS)


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_one_attempt_records_its_counts_and_what_it_saw_of_its_account():
    labels = Labels(model="unit-metrics", deployment="d1")
    by = {"model": "unit-metrics", "deployment": "d1"}
    fields = {
        "sessions_created": 2,
        "followup_turns": 1,
        "repair_turns": 1,
        "image_uploads": 3,
        "image_url_fetches": 1,
        "credit_errors": 1,
        "reuse_fallback": "gone",
        "refused_by": None,
        "prompt_tokens_estimated": 40,
        "prompt_tokens_reported": 0,
    }
    balance = read_balance(
        {
            "total": 2.5,
            "dailyCredits": 0,
            "subscriptionCredits": 0,
            "extraCredits": 2.5,
            "dailyRefilledAt": "2026-12-06T01:00:00.000Z",
        }
    )
    seen = Seen(balance=balance, rest=Rest(until=4102444800.0, reason="out_of_credits"))  # 2100
    record_request(labels, fields, seen)
    record_request(labels, {**fields, "reuse_fallback": None, "refused_by": "account_rest"}, None)
    assert sample("conol_sessions_created_total", **by) == 4
    assert sample("conol_followup_turns_total", **by) == 2
    assert sample("conol_image_uploads_total", **by) == 6
    assert sample("conol_credit_errors_total", **by) == 2
    assert sample("conol_reuse_fallbacks_total", **by, reason="gone") == 1
    assert sample("conol_requests_refused_total", **by, reason="account_rest") == 1
    assert sample("conol_prompt_tokens_total", **by, source="estimated") == 80
    assert sample("conol_prompt_tokens_total", **by, source="reported") == 0
    assert sample("conol_account_balance_credits", **by, part="extra") == 2.5
    assert sample("conol_account_next_refill_timestamp_seconds", **by) == 1796605200.0
    assert sample("conol_account_rest_until_timestamp_seconds", **by) == 4102444800.0
    record_request(labels, {}, Seen())  # the next request found no rest
    assert sample("conol_account_rest_until_timestamp_seconds", **by) == 0


def test_the_labels_are_the_routed_model_group_and_the_deployment_id():
    routed = {"litellm_params": {"metadata": {"model_group": "chat"}, "model_info": {"id": "chat-b"}}}
    assert labels_of(routed, "conol/claude-haiku-4-5") == Labels("chat", "chat-b")
    messages = {"litellm_params": {"metadata": None, "litellm_metadata": {"model_group": "code"}}}
    assert labels_of(messages, "conol/kimi") == Labels("code", "")
    assert labels_of({}, "conol/claude-haiku-4-5") == Labels("conol/claude-haiku-4-5", "")


def test_the_fields_ride_in_the_payloads_spend_logs_metadata_without_changing_the_keys_own():
    keys_own = {"cost_center": "42"}
    metadata = {"spend_logs_metadata": keys_own}
    details = {"litellm_params": {"metadata": metadata}}
    _into_payload(details, {"sessions_created": 1})
    assert metadata["spend_logs_metadata"] == {"cost_center": "42", PAYLOAD_KEY: {"sessions_created": 1}}
    assert keys_own == {"cost_center": "42"}  # a copy: the key's own metadata is not changed
    bare = {"litellm_params": {"metadata": None, "litellm_metadata": {}}}
    _into_payload(bare, {"sessions_created": 0})
    assert bare["litellm_params"]["litellm_metadata"] == {
        "spend_logs_metadata": {PAYLOAD_KEY: {"sessions_created": 0}}
    }
    _into_payload({"litellm_params": SimpleNamespace()}, {})  # not a dict: nothing to do
