"""JSON responses, shared by conol's ``/api`` endpoints and the fake's ``/_fake`` control endpoints."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from ._codec import dumps


def json_response(data: object, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(body=dumps(data), status=status, content_type="application/json", headers=headers)


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    """conol's error shape: ``{"error": message}``."""
    return json_response({"error": message}, status, headers)
