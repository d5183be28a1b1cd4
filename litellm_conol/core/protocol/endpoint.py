"""Where conol is and how a request authenticates: pure data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

COOKIE_NAME = "__Secure-better-auth.session_token"
DEFAULT_BASE_URL = "https://conol.ai"


@dataclass(frozen=True)
class Endpoint:
    """Where conol is and how to authenticate. ``repr`` never shows the token."""

    base_url: str
    token: str = field(repr=False)

    def headers(self) -> dict[str, str]:
        origin = _origin(self.base_url)
        return {
            "Cookie": f"{COOKIE_NAME}={self.token}",
            "Origin": origin,
            "Referer": origin + "/",
        }

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path


def _origin(base_url: str) -> str:
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}"
