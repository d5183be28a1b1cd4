"""Loaded into a proxy subprocess as a callback (``support.loopback_images.public_loopback``, with
``PYTHONPATH=tests``): there, our image fetcher takes 127.0.0.2 for a public image host, as
tests/integration/test_image_fetch_ssrf.py's ``allowed`` policy does in process. An end-to-end test's
image server stands on it; every other address is refused as ever."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from litellm.integrations.custom_logger import CustomLogger

from litellm_conol.client import assets, fetch

PUBLIC = "127.0.0.2"


def _only_the_test_host(address: str) -> bool:
    return address == PUBLIC


@dataclass
class LoopbackFetcher(fetch.ImageFetcher):
    allowed: Callable[[str], bool] = field(default=_only_the_test_host)


assets.ImageFetcher = LoopbackFetcher  # type: ignore[misc]
public_loopback = CustomLogger()
