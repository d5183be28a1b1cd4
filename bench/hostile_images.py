"""What one hostile image costs a real proxy: its peak memory, and how long it holds other requests.

``python -m bench.hostile_images`` starts the fake conol and a real LiteLLM proxy (the shipped
``proxy_config.yaml``), warms the proxy up, then sends ONE chat request whose image is a ``data:``
URL of ``--mb`` MB of percent-encoding (``%89%50%4E%47…``: a PNG signature and random bytes, a third
of the text's length once decoded, so within the default ``max_image_bytes`` at 24 MB). Meanwhile a
second client asks the same proxy ``GET /health/liveliness`` (answered on the same event loop) every
10 ms, and a third sends tiny chat requests one after another. It prints:

- the request's status and time, and the proxy's peak RSS (``VmHWM``) before and after it;
- the slowest liveliness answer and the slowest tiny chat answer during it, next to their medians
  and maxima in the 3 s before it (the longest time the proxy's event loop was held, and the
  machine's noise floor).

``--repo PATH`` runs the proxy from another checkout (``--repo /work/main``: the numbers before a
change), with this one's virtualenv. Everything talks to 127.0.0.1; the processes are stopped on the
way out. Not part of the test suite's pass/fail: the tests assert the refusal, this measures it.
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from . import procs
from .proxy import free_port

ROOT = Path(__file__).resolve().parent.parent
MASTER_KEY = "sk-bench-master"
MODEL = "claude-haiku-4-5"


def percent_encoded_png(megabytes: float) -> str:
    """A ``data:image/png,`` URL of ``megabytes`` MB of ``%XX`` escapes (bytes starting like a PNG)."""
    size = int(megabytes * 1_000_000) // 3
    data = b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8)
    return "data:image/png,%" + data.hex("%").upper()


def oversized_base64_png(megabytes: float) -> str:
    """A base64 ``data:`` URL of ``megabytes`` MB of text (refused by its size before decoding)."""
    size = int(megabytes * 1_000_000) * 3 // 4
    return "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(size - 8)).decode()


def peak_rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


# LiteLLM's own openai provider, at a port where nothing listens: what the proxy spends on the same
# body with no conol code on the path (``--model openai-baseline``).
BASELINE = {
    "model_name": "openai-baseline",
    "litellm_params": {
        "model": "openai/gpt-4o",
        "api_base": "http://127.0.0.1:9/v1",
        "api_key": "x",
        "max_retries": 0,
    },
}


def proxy_config(repo: Path, out: Path) -> Path:
    """The checkout's shipped config, and the baseline deployment."""
    config = yaml.safe_load((repo / "proxy_config.yaml").read_text())
    config["model_list"].append(BASELINE)
    path = out / "hostile-config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def start_proxy(repo: Path, fake: Any, out: Path) -> tuple[Any, str]:
    port = free_port()
    env = procs.child_env(LITELLM_MASTER_KEY=MASTER_KEY)
    env |= {"CONOL_API_BASE": fake.base_url, "CONOL_SESSION_TOKEN": fake.token}
    log = open(out / "hostile-proxy.log", "wb")  # noqa: SIM115 - the child owns it
    command = [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(proxy_config(repo, out))]
    process = procs.subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        cwd=repo,
        env=env,
        stdout=log,
        stderr=procs.subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"proxy exited: see {out / 'hostile-proxy.log'}")
        try:
            if httpx.get(f"{base}/health/liveliness", timeout=1).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    procs.stop_group(process)
    raise TimeoutError("proxy not ready")


def chat_body(content: Any, model: str = MODEL) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": content}]}


class Pinger(threading.Thread):
    """Times one kind of request, again and again, until stopped."""

    def __init__(self, base: str, kind: str) -> None:
        super().__init__(daemon=True)
        self.base, self.kind = base, kind
        self.times: list[float] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        headers = {"Authorization": f"Bearer {MASTER_KEY}"}
        with httpx.Client(base_url=self.base, headers=headers, timeout=120) as client:
            while not self.stopping.is_set():
                started = time.perf_counter()
                if self.kind == "liveliness":
                    client.get("/health/liveliness")
                else:
                    client.post("/v1/chat/completions", json=chat_body("Hi"))
                self.times.append(time.perf_counter() - started)
                self.stopping.wait(0.01)


def hostile_content(kind: str, megabytes: float) -> Any:
    """The message content of the hostile request: ``percent`` (the image above), ``base64`` (an
    oversized base64 image of the same length) or ``text`` (that many MB of plain text, which
    LiteLLM parses and copies as it does any body: what the proxy spends before our handler runs)."""
    if kind == "text":
        return "x" * int(megabytes * 1_000_000)
    url = percent_encoded_png(megabytes) if kind == "percent" else oversized_base64_png(megabytes)
    return [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": url}}]


def measure(
    base: str, pid: int, megabytes: float, kind: str = "percent", model: str = MODEL
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {MASTER_KEY}"}
    content = hostile_content(kind, megabytes)
    with httpx.Client(base_url=base, headers=headers, timeout=300) as client:
        client.post("/v1/chat/completions", json=chat_body("warm up")).raise_for_status()
    pingers = [Pinger(base, "liveliness"), Pinger(base, "chat")]
    for pinger in pingers:
        pinger.start()
    time.sleep(3)
    before = {p.kind: list(p.times) for p in pingers}
    rss_before, hwm_before = peak_rss_mb(pid)
    started = time.perf_counter()
    with httpx.Client(base_url=base, headers=headers, timeout=300) as client:
        response = client.post("/v1/chat/completions", json=chat_body(content, model))
    took = time.perf_counter() - started
    time.sleep(1)
    for pinger in pingers:
        pinger.stopping.set()
        pinger.join()
    _, hwm_after = peak_rss_mb(pid)
    result: dict[str, Any] = {
        "status": response.status_code,
        "answer": response.text[:200],
        "seconds": round(took, 2),
        "rss_before_mb": round(rss_before, 1),
        "peak_before_mb": round(hwm_before, 1),
        "peak_after_mb": round(hwm_after, 1),
    }
    for pinger in pingers:
        during = pinger.times[len(before[pinger.kind]) :]
        result[f"{pinger.kind}_median_before_ms"] = round(statistics.median(before[pinger.kind]) * 1000, 1)
        result[f"{pinger.kind}_max_before_ms"] = round(max(before[pinger.kind]) * 1000, 1)  # the noise floor
        result[f"{pinger.kind}_max_during_ms"] = round(max(during, default=0.0) * 1000, 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="the checkout whose proxy runs")
    parser.add_argument("--mb", type=float, default=24.0, help="MB of percent-encoding in the image")
    parser.add_argument("--kind", choices=("percent", "base64", "text"), default="percent")
    parser.add_argument(
        "--model", default=MODEL, help="the model the hostile request names (openai-baseline: no conol code)"
    )
    args = parser.parse_args()
    from litellm_conol.fake import FakeConol

    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    with FakeConol() as fake:
        process, base = start_proxy(args.repo.resolve(), fake, out)
        try:
            result = measure(base, process.pid, args.mb, args.kind, args.model)
        finally:
            procs.stop_group(process)
    print(f"repo={args.repo} kind={args.kind} {args.mb:g} MB model={args.model}")
    for key, value in result.items():
        print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
