"""conol's API paths, each written once (docs/protocol.md names what each one does)."""

from __future__ import annotations

SESSIONS = "/api/sessions"
"""``POST``: create a session (docs/protocol.md#create)."""
GET_SESSION = "/api/auth/get-session"
"""``GET``: the token's session while it is alive (docs/protocol.md#authentication)."""
BALANCE = "/api/billing/balance"
"""``GET``: the account's credits (docs/protocol.md#balance)."""
ASSETS = "/api/assets"
"""``POST``: upload an image (docs/protocol.md#assets)."""
AGENT_SERVERS = "/api/agent-servers"
"""``GET``: the account's models (docs/protocol.md#discovery)."""


def session(session_id: str) -> str:
    """``GET``: the session's status."""
    return f"{SESSIONS}/{session_id}"


def session_messages(session_id: str) -> str:
    """``GET``: the event stream; ``POST``: a follow-up turn (docs/protocol.md#follow-up-turns)."""
    return f"{SESSIONS}/{session_id}/messages"


def session_model(session_id: str) -> str:
    """``POST``: pin the session's model or effort (docs/protocol.md#model-pinning)."""
    return f"{SESSIONS}/{session_id}/model"


def asset(asset_id: str) -> str:
    """What a turn's image part names: an uploaded asset."""
    return f"{ASSETS}/{asset_id}"
