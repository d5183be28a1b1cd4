"""Helpers for the reliability tests: proxies with generated configs, SSE reading, leak counters.

Each proxy test module starts its own proxy (module-scoped) pointed at its own ``FakeConol``
instances, so fault injection never disturbs other modules' shared servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from litellm_conol.client.aiohttp_stream import pooled_connections
from litellm_conol.fake import FakeConol
from support.proxyproc import MASTER_KEY

AUTH = {"Authorization": f"Bearer {MASTER_KEY}"}


def proxy_config(
    model_list: list[dict[str, Any]],
    *,
    router_settings: dict[str, Any] | None = None,
    callbacks: list[str] | None = None,
) -> dict[str, Any]:
    litellm_settings: dict[str, Any] = {
        "custom_provider_map": [{"provider": "conol", "custom_handler": "litellm_conol.conol_llm"}],
        "telemetry": False,
        "suppress_debug_info": True,
    }
    if callbacks:
        litellm_settings["callbacks"] = callbacks
    config: dict[str, Any] = {
        "model_list": model_list,
        "litellm_settings": litellm_settings,
        "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},
    }
    if router_settings:
        config["router_settings"] = router_settings
    return config


def deployment(name: str, model: str = "conol/claude-haiku-4-5", **params: Any) -> dict[str, Any]:
    return {"model_name": name, "litellm_params": {"model": model, **params}}


def conol(fake: FakeConol, model_name: str, deployment_id: str, **params: Any) -> dict[str, Any]:
    """A ``conol/claude-haiku-4-5`` deployment of ``model_name`` on ``fake``, with a known id."""
    return {
        "model_name": model_name,
        "litellm_params": {
            "model": "conol/claude-haiku-4-5",
            "api_base": fake.base_url,
            "api_key": fake.token,
            **params,
        },
        "model_info": {"id": deployment_id},
    }


def creates(fake: FakeConol) -> int:
    """Session creations ``fake`` received (refused ones included)."""
    return sum(1 for r in fake.requests if r.method == "POST" and r.path == "/api/sessions")


# --- talking to the proxy ---------------------------------------------------------------------------


@dataclass
class Outcome:
    status: int
    seconds: float
    body: Any = None
    text: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    # streaming only
    content: str = ""
    error: Any = None
    done_marker: bool = False
    finish: str | None = None


def chat_body(model: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


def post_chat(base_url: str, body: dict[str, Any], timeout: float = 60.0) -> Outcome:
    started = time.monotonic()
    response = httpx.post(f"{base_url}/v1/chat/completions", json=body, headers=AUTH, timeout=timeout)
    seconds = time.monotonic() - started
    try:
        parsed = response.json()
    except ValueError:
        parsed = None
    return Outcome(response.status_code, seconds, parsed, response.text, dict(response.headers))


def stream_chat(base_url: str, body: dict[str, Any], timeout: float = 60.0) -> Outcome:
    """POST with stream=true and read the SSE answer: content, an error event, ``[DONE]``."""
    started = time.monotonic()
    content: list[str] = []
    outcome = Outcome(0, 0.0)
    with httpx.stream(
        "POST",
        f"{base_url}/v1/chat/completions",
        json={**body, "stream": True},
        headers=AUTH,
        timeout=timeout,
    ) as response:
        outcome.status = response.status_code
        outcome.headers = dict(response.headers)
        if response.status_code != 200:
            response.read()
            outcome.text = response.text
            with contextlib.suppress(ValueError):
                outcome.body = response.json()
        else:
            lines: list[str] = []
            for line in response.iter_lines():
                lines.append(line)
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    outcome.done_marker = True
                    continue
                try:
                    event = json.loads(data)
                except ValueError:
                    continue
                if "error" in event:
                    outcome.error = event["error"]
                    continue
                for choice in event.get("choices") or []:
                    content.append((choice.get("delta") or {}).get("content") or "")
                    outcome.finish = choice.get("finish_reason") or outcome.finish
            outcome.text = "\n".join(lines)
    outcome.content = "".join(content)
    outcome.seconds = time.monotonic() - started
    return outcome


# --- leak counters ------------------------------------------------------------------------------------


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def pool_connections(client: httpx.AsyncClient) -> int:
    """Connections held by the client's pool (aiohttp's or httpcore's)."""
    count = pooled_connections(client)
    assert count is not None, (
        "the pool's internals moved: update litellm_conol.client.aiohttp_stream.pooled_connections"
    )
    return count


# LiteLLM's own per-loop background worker (started on the first call, lives as long as the loop).
_LITELLM_WORKERS = ("LoggingWorker.",)


def other_tasks() -> set[asyncio.Task[Any]]:
    """Pending tasks of this loop except the current one and LiteLLM's long-lived workers."""
    current = asyncio.current_task()
    return {
        t
        for t in asyncio.all_tasks()
        if t is not current
        and not t.done()
        and not getattr(t.get_coro(), "__qualname__", "").startswith(_LITELLM_WORKERS)
    }


async def settle_tasks(baseline: set[asyncio.Task[Any]], timeout: float = 2.0) -> set[asyncio.Task[Any]]:
    """Tasks beyond ``baseline`` still pending after up to ``timeout`` s (background loggers finish)."""
    deadline = time.monotonic() + timeout
    while True:
        extra = other_tasks() - baseline
        if not extra or time.monotonic() >= deadline:
            return extra
        await asyncio.sleep(0.05)
