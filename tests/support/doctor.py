"""What ``litellm-conol doctor`` checks and what each drift of the fake does to them: one table for
the offline tier (every drift covered) and the integration tier (each drift against the fake)."""

from __future__ import annotations

SESSION_CHECKS = [
    "token",
    "balance",
    "assets",
    "discovery",
    "create",
    "stream",
    "previews",
    "status",
    "tool_call",
]
# the capability lines (contextUsage, framing) and their outcomes on the default fake: no contextUsage, SSE framing
CAPABILITIES = {"contextUsage": "absent", "framing": "pass"}


# drift → (failed checks, skipped checks); every other check passes
DRIFT_EFFECTS: dict[str, tuple[set[str], set[str]]] = {
    "auth_wrapped": ({"token"}, set()),
    "balance_renamed": ({"balance"}, set()),
    "id_renamed": ({"create", "tool_call"}, {"stream", "previews", "status"}),
    "event_renamed": ({"stream", "tool_call"}, {"previews"}),
    "preview_renamed": ({"previews"}, set()),
    "tool_renamed": ({"tool_call"}, set()),
    "status_word": ({"status"}, set()),
    "status_wrapped": ({"status"}, set()),
    "asset_renamed": ({"assets"}, set()),
    "agent_servers_renamed": ({"discovery"}, set()),
}
