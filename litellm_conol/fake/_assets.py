"""The fake's image assets (``POST /api/assets``) and agent-servers list (``GET /api/agent-servers``),
docs/protocol.md#assets and #discovery, with the readings left open as config switches.

* ``assets``: ``"on"`` (201 ``{id, url, mediaType}``), ``"absent"`` (404: a conol without uploads).
  A non-image content type → 415 and a body over ``asset_max_bytes`` → 413 are the fake's own
  choices (no source shows conol's); ``asset_status`` forces every upload to answer that status.
* ``agent_servers``: ``"list"`` (the nested shape, a bare list), ``"agentServers"``,
  ``"servers"`` or ``"data"`` (the list under that key), ``"strings"`` (models as bare names, no
  modalities or efforts), ``"absent"`` (404). Every server carries a dummy ``apiKey``
  (:data:`AGENT_SERVER_KEY`) so tests can check that it never leaks.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from ._records import FakeConfig, RequestRecord
from ._responses import error_response, json_response

AGENT_SERVER_KEY = "fake-agent-server-apikey-7f3e9c1d2b"
ASSET_PATH = re.compile(r"/api/assets/([A-Za-z0-9_-]+)")

_CATALOG_FILE = Path(__file__).resolve().parents[1] / "core" / "models" / "models.json"
# conol offers it, the packaged catalog does not list it (premium: the fake downgrades it at create)
EXTRA_MODELS = ("claude-fable-5",)
# Which models take images when models.json does not say (its optional supports_vision decides)
_VISION = ("gpt-5.6", "claude", "gemini", "grok", "mimo", "kimi-k3")
# Effort ladders by model-name pattern (docs/protocol.md#effort-words); first match wins
_LADDERS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("gpt-5.5-pro",), ("medium", "high", "xhigh")),
    (("claude-opus", "fable-5", "gpt-5.5", "gpt-5.6"), ("low", "medium", "high", "xhigh")),
    (("sonnet",), ("low", "medium", "high")),
    (("deepseek-v4",), ("high", "xhigh")),
    (("fusion",), ()),
)
_DEFAULT_LADDER = ("minimal", "low", "medium", "high")  # haiku, glm, hy3, kimi, qwen, minimax, gemini, ...


@dataclass(frozen=True)
class StoredAsset:
    id: str
    media_type: str
    size: int
    sha256: str


class AssetStore:
    """Uploaded assets by id, until ``reset``."""

    def __init__(self) -> None:
        self.assets: dict[str, StoredAsset] = {}

    def known(self, path: str) -> bool:
        match = ASSET_PATH.fullmatch(path)
        return match is not None and match.group(1) in self.assets

    def digests(self, parts: list[dict[str, Any]]) -> list[str]:
        """The sha256 of each image part's asset, in order (the parts were validated: each is known)."""
        found = (ASSET_PATH.fullmatch(str(p.get("content"))) for p in parts if p.get("type") == "image")
        return [self.assets[match.group(1)].sha256 for match in found if match is not None]

    async def upload(self, request: web.Request, record: RequestRecord, config: FakeConfig) -> web.Response:
        if config.assets == "absent":
            return error_response(404, "Not found")
        if config.asset_status is not None:
            return error_response(config.asset_status, f"injected failure (HTTP {config.asset_status})")
        media_type = request.content_type
        if not media_type.startswith("image/"):
            return error_response(415, f"unsupported media type {media_type!r}: images only")
        data = await request.read()
        if not data:
            return error_response(400, "empty body")
        if len(data) > config.asset_max_bytes:
            return error_response(413, f"image too large ({len(data)} bytes)")
        digest = hashlib.sha256(data).hexdigest()
        asset = StoredAsset(f"asset_{len(self.assets) + 1}", media_type, len(data), digest)
        self.assets[asset.id] = asset
        answer = {"id": asset.id, "url": f"/api/assets/{asset.id}", "mediaType": media_type}
        return json_response(config.drifts.asset(answer), 201)


def agent_servers_response(config: FakeConfig) -> web.Response:
    mode = config.agent_servers
    if mode == "absent":
        return error_response(404, "Not found")
    servers = [_server(strings=mode == "strings")]
    body: Any = {mode: servers} if mode in ("agentServers", "servers", "data") else servers
    return json_response(config.drifts.agent_servers(body))


def _server(*, strings: bool) -> dict[str, Any]:
    names = [*_catalog_models(), *EXTRA_MODELS]
    models: list[Any] = names if strings else [_model(name, vision) for name, vision in _vision(names)]
    agent = {
        "name": "conol",
        "defaultModel": names[0],
        "models": models,
        "modelPresets": [{"id": "pro", "text": "z-ai/glm-5.2", "multimodal": "moonshotai/kimi-k3"}],
    }
    return {
        "id": "server-1",
        "apiKey": AGENT_SERVER_KEY,
        "capabilities": {"defaultAgent": "conol", "agents": [agent]},
    }


def _model(name: str, vision: bool) -> dict[str, Any]:
    return {
        "name": name,
        "displayName": name.rsplit("/", 1)[-1],
        "efforts": list(_ladder(name)),
        "inputModalities": ["text", "image"] if vision else ["text"],
    }


def _ladder(name: str) -> tuple[str, ...]:
    return next(
        (ladder for patterns, ladder in _LADDERS if any(p in name for p in patterns)), _DEFAULT_LADDER
    )


def _catalog_models() -> list[str]:
    return [line["agent_model"] for line in _catalog_lines()]


def _vision(names: list[str]) -> list[tuple[str, bool]]:
    said = {line["agent_model"]: line.get("supports_vision") for line in _catalog_lines()}
    return [(name, _said_or_guessed(said.get(name), name)) for name in names]


def _said_or_guessed(said: Any, name: str) -> bool:
    return said if isinstance(said, bool) else any(v in name for v in _VISION)


def _catalog_lines() -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = json.loads(_CATALOG_FILE.read_text(encoding="utf-8"))["models"]
    return lines
