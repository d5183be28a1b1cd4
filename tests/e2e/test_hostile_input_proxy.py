"""Hostile images through the real proxy: what one request can cost the proxy, and other callers.

- a 24 MB percent-encoded ``data:`` URL (8 MB of bytes, within the default ``max_image_bytes``) is
  refused at once; the proxy's peak memory (its ``VmHWM``, reset before the request) grows by less
  than :data:`PERCENT_BOUND_MB` (about 75 MB: LiteLLM reading the body; it grew by about 1.9 GB
  when each escape was decoded to an object, and the request was answered);
- 20 image URLs of 10 MiB each are answered, each image uploaded as it arrives, the proxy's peak
  growing by less than :data:`URL_IMAGES_BOUND_MB` (110 to 140 MB: four images read at a time, and
  what the first fetch sets up; 250 MB when every image was held before any upload);
- a caller whose image names resolve slowly (a DNS server on loopback that takes
  :data:`SLOW_DNS_SECONDS` to answer) holds up no other caller: another caller's name is answered at
  once, while the slow lookups still wait.

The proxy gets ``support.hostile_shim``: its lookups go to the test DNS server, and its image fetches
may reach the loopback image server (the only one a test can run).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from support.dns_stub import DnsStub, dns_stub
from support.proxyproc import MASTER_KEY, ProxyProcess, fake_env, running_proxy, shipped_config
from support.timing import bound

from litellm_conol.fake import FakeConol

pytestmark = pytest.mark.timeout(300)

MiB = 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n"
IMAGE_BYTES = 10 * MiB
PERCENT_BOUND_MB = 400
URL_IMAGES_BOUND_MB = 180
SLOW_DNS_SECONDS = 6.0
STUB = ".stub.test"  # names the test DNS server answers


class ImageServer(BaseHTTPRequestHandler):
    """``GET /img/<n>``: a PNG of IMAGE_BYTES whose first bytes name ``n`` (no two are alike)."""

    filler = bytes(IMAGE_BYTES)

    def do_GET(self) -> None:
        head = PNG + self.path.encode()
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(IMAGE_BYTES))
        self.end_headers()
        body = memoryview(self.filler)
        self.wfile.write(head)
        for start in range(len(head), IMAGE_BYTES, 256 * 1024):
            self.wfile.write(body[start : min(start + 256 * 1024, IMAGE_BYTES)])

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def images() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ImageServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def dns() -> Iterator[DnsStub]:
    with dns_stub() as stub:
        yield stub


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeConol]:
    with FakeConol() as server:
        yield server


@pytest.fixture(scope="module")
def proxy(fake, dns, images, tmp_path_factory) -> Iterator[ProxyProcess]:
    config = shipped_config()
    config["litellm_settings"]["callbacks"] = ["support.hostile_shim.shim"]
    fetching = {"model": "conol/claude-haiku-4-5", "image_fetch": "public", "image_fetch_ports": [images]}
    config["model_list"] += [
        {"model_name": "fetching", "litellm_params": {**fetching, "image_fetch_timeout": 120}},
        {"model_name": "fetching-quick", "litellm_params": {**fetching, "image_fetch_timeout": 3}},
    ]
    env = {**fake_env(fake), "DNS_STUB_PORT": str(dns.port), "ALLOW_LOOPBACK_IMAGES": "1"}
    with running_proxy(config, tmp_path_factory.mktemp("hostile"), env=env, secrets=[fake.token]) as process:
        yield process


def post(proxy: ProxyProcess, body: dict, timeout: float = 120) -> httpx.Response:
    headers = {"Authorization": f"Bearer {MASTER_KEY}"}
    return httpx.post(f"{proxy.base_url}/v1/chat/completions", json=body, headers=headers, timeout=timeout)


def with_images(model: str, urls: list[str], user: str = "alice") -> dict:
    parts = [{"type": "text", "text": "What are these?"}]
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in urls]
    return {"model": model, "user": user, "messages": [{"role": "user", "content": parts}]}


def peak_growth_mb(proxy: ProxyProcess, send) -> tuple[httpx.Response, float]:
    """``send()``'s answer, and how far the proxy's peak RSS rose above its RSS before it (the peak
    is reset first: ``/proc/<pid>/clear_refs``)."""
    status = Path(f"/proc/{proxy.process.pid}/status")

    def field(name: str) -> float:
        line = next(line for line in status.read_text().splitlines() if line.startswith(name + ":"))
        return int(line.split()[1]) / 1024

    Path(f"/proc/{proxy.process.pid}/clear_refs").write_text("5")
    before = field("VmRSS")
    response = send()
    return response, field("VmHWM") - before


def test_a_24_mb_percent_encoded_image_is_refused_at_once_and_costs_the_proxy_little(proxy, fake):
    fake.reset()
    data = PNG + os.urandom(8_000_000 - len(PNG))
    url = "data:image/png,%" + data.hex("%")
    response, growth = peak_growth_mb(proxy, lambda: post(proxy, with_images("claude-haiku-4-5", [url])))
    assert response.status_code == 400
    assert "is not base64 and 24,000,000 characters long" in response.json()["error"]["message"]
    assert fake.requests == []
    assert growth < PERCENT_BOUND_MB, f"the proxy's peak grew by {growth:.0f} MB"


def test_twenty_url_images_are_uploaded_as_they_arrive(proxy, fake, dns, images):
    fake.reset()
    urls = [f"http://img-{i}{STUB}:{images}/img/{i}" for i in range(20)]
    for i in range(20):
        dns.answer(f"img-{i}{STUB}", ["127.0.0.1"])
    response, growth = peak_growth_mb(proxy, lambda: post(proxy, with_images("fetching", urls)))
    assert response.status_code == 200, response.text
    assert len(fake.assets) == 20 and {a.size for a in fake.assets.values()} == {IMAGE_BYTES}
    assert growth < URL_IMAGES_BOUND_MB, f"the proxy's peak grew by {growth:.0f} MB"


def test_slow_names_of_one_caller_do_not_hold_up_another(proxy, fake, dns, images):
    """The slow caller's four names take SLOW_DNS_SECONDS to answer (its request fails at its own
    3 s budget); meanwhile another caller's name is answered at once, and its image refused at once
    (it resolves to a private address): not after waiting behind the slow lookups."""
    fake.reset()
    for i in range(4):
        dns.answer(f"slow-{i}{STUB}", ["93.184.216.34"], delay=SLOW_DNS_SECONDS)
    dns.answer(f"fast{STUB}", ["10.9.9.9"])
    slow_urls = [f"http://slow-{i}{STUB}:{images}/img/{i}" for i in range(4)]
    with ThreadPoolExecutor(2) as pool:
        slow = pool.submit(post, proxy, with_images("fetching-quick", slow_urls, user="slow"))
        deadline = time.monotonic() + bound(5.0)
        while len([n for n in dns.asked if n.startswith("slow-")]) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)  # until the four slow lookups are waiting at the DNS server
        fast = post(proxy, with_images("fetching-quick", [f"http://fast{STUB}:{images}/x.png"], user="fast"))
        answered_while_slow_waited = not slow.done()
        slow_answer = slow.result()
    assert fast.status_code == 400
    assert "image_url: image URL refused: not a public http(s) image" in fast.json()["error"]["message"]
    assert answered_while_slow_waited
    assert "took longer than image_fetch_timeout (3 s)" in slow_answer.json()["error"]["message"]
    assert fake.requests == []
