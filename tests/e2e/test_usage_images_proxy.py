"""The usage estimate never looks at an image, through the real proxy: an ``image_url`` at
``detail: "high"`` made LiteLLM's token counter GET the caller's URL synchronously on the event loop
after the paid session, or decode a data: URL, and raise where it could not (a percent-encoded one):
a 500 after the paid session (and the Router's retries) or, streamed, an error after the answer.
Now each image is counted at LiteLLM's default size, the answer says so, and the image server sees
only our own fetch (the upload), streamed and not."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote_from_bytes

import litellm
import openai
import pytest
from support.loopback_images import PUBLIC
from support.proxyproc import MASTER_KEY, fake_env, running_proxy
from support.usage_log import usage_rows

from litellm_conol.fake import FakeConol

pytestmark = pytest.mark.timeout(180)

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6364606060000000050001a5f645400000000049454e44ae426082"
)
TEXT = "Compare them. [[fake:echo]]"
DEFAULT_IMAGE = 250  # LiteLLM's DEFAULT_IMAGE_TOKEN_COUNT: what each image counts for now


class ImageServer(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__((PUBLIC, 0), _Handler)
        self.hits: list[str] = []


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(PNG)))
        self.end_headers()
        self.wfile.write(PNG)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def images() -> Iterator[ImageServer]:
    server = ImageServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeConol]:
    with FakeConol() as server:
        yield server


@pytest.fixture(scope="module")
def spend_file(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("spend") / "spend.jsonl"


@pytest.fixture(scope="module")
def proxy(fake, images, spend_file, tmp_path_factory):
    port = images.server_address[1]
    config = {
        "model_list": [
            {
                "model_name": "fetching",
                "litellm_params": {
                    "model": "conol/claude-haiku-4-5",
                    "image_fetch": "public",
                    "image_fetch_ports": [port],
                },
            }
        ],
        "litellm_settings": {
            "custom_provider_map": [{"provider": "conol", "custom_handler": "litellm_conol.conol_llm"}],
            "callbacks": ["support.loopback_images.public_loopback", "support.spend_logger.spend_recorder"],
            "telemetry": False,
        },
        "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},
    }
    env = {**fake_env(fake), "SPEND_LOG_FILE": str(spend_file)}
    with running_proxy(config, tmp_path_factory.mktemp("proxy"), env=env, secrets=[fake.token]) as process:
        yield process


def _messages(images: ImageServer, name: str) -> list[dict]:
    url = f"http://{PUBLIC}:{images.server_address[1]}/{name}.png"
    percent = "data:image/png," + quote_from_bytes(PNG)  # LiteLLM's base64 decode raises on it
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": TEXT},
                {"type": "image_url", "image_url": {"url": url, "detail": "high"}},
                {"type": "image_url", "image_url": {"url": percent, "detail": "high"}},
            ],
        }
    ]


def _expected_prompt_tokens() -> int:
    return int(
        litellm.token_counter(messages=[{"role": "user", "content": [{"type": "text", "text": TEXT}]}])
    )


def _sessions(fake: FakeConol) -> int:
    return sum(
        1 for r in fake.requests if r.method == "POST" and r.path == "/api/sessions" and r.status == 201
    )


@pytest.mark.parametrize("stream", [False, True], ids=["not-streamed", "streamed"])
def test_high_detail_images_are_counted_not_fetched_and_the_answer_stands(
    proxy, fake, images, spend_file, stream
):
    before_hits, before_rows, before_sessions = (
        len(images.hits),
        len(usage_rows(spend_file, 0)),
        _sessions(fake),
    )
    name = "streamed" if stream else "whole"
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as client:
        if stream:
            chunks = list(
                client.chat.completions.create(
                    model="fetching",
                    messages=_messages(images, name),
                    stream=True,
                    stream_options={"include_usage": True},
                )
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            usage = next(c.usage for c in chunks if c.usage is not None)
            fields = {}
            for chunk in chunks:  # the result's fields ride on the chunk before the finish
                fields.update((chunk.model_extra or {}).get("provider_specific_fields") or {})
        else:
            response = client.chat.completions.create(model="fetching", messages=_messages(images, name))
            text, usage = response.choices[0].message.content, response.usage
            fields = response.choices[0].message.model_extra["provider_specific_fields"]
    assert text == TEXT
    assert usage.prompt_tokens == _expected_prompt_tokens() + 2 * DEFAULT_IMAGE
    assert (fields["usage_estimated"], fields["usage_estimated_attachments"]) == (True, 2)
    assert _sessions(fake) - before_sessions == 1  # one paid session, no retry
    assert images.hits[before_hits:] == [f"/{name}.png"]  # our upload's fetch, and nothing after it
    rows = usage_rows(spend_file, before_rows + 1)[before_rows:]
    assert [(row["outcome"], row["prompt_tokens"]) for row in rows] == [("success", usage.prompt_tokens)]
