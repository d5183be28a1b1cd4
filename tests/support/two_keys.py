"""A LiteLLM ``custom_auth`` hook with two virtual keys of two teams, for proxies in tests: the proxy's
own virtual keys need its database, which cannot run here (docs/team-deployment.md), and a custom
auth writes the same identity fields (``user_api_key_hash``, team, user) for each request."""

from __future__ import annotations

from typing import Any

from litellm.proxy._types import UserAPIKeyAuth

KEYS = {"sk-alice-key": "team-a", "sk-bob-key": "team-b"}


async def user_api_key_auth(request: Any, api_key: str) -> UserAPIKeyAuth:
    key = api_key.removeprefix("Bearer ").strip()
    team = KEYS.get(key)
    if team is None:
        raise ValueError("unknown key")
    return UserAPIKeyAuth(api_key=key, team_id=team, user_id=key.removesuffix("-key").removeprefix("sk-"))
