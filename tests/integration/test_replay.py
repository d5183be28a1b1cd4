"""Recorded sessions: the committed fixtures (written by hand from the spec until real recordings
exist) replay through the fake and the SDK to their exact expected answers; ``litellm-conol record``
captures a session that replays to the same answer, scrubbed of the token and personal data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import litellm
import pytest
from support.paths import RECORDINGS
from support.timing import bound

import litellm_conol
from litellm_conol import cli
from litellm_conol.fake import BUILTINS, RECORDING_FORMAT, FakeConol, load_recording, replay_scenario

pytestmark = pytest.mark.timeout(60)


litellm_conol.register()


FIXTURES = RECORDINGS


def _tools(names: list[str]) -> list[dict[str, Any]] | None:
    schema = {"type": "object", "properties": {}}
    return [{"type": "function", "function": {"name": n, "parameters": schema}} for n in names] or None


def _answer(fake: FakeConol, marker: str, tools: list[str], stream: bool) -> dict[str, Any]:
    """content, reasoning, tool_calls ([{name, arguments}]) and finish_reason, as a client sees them."""
    kwargs: dict[str, Any] = {
        "model": "conol/deepseek-v4-pro",
        "messages": [{"role": "user", "content": marker}],
        "api_base": fake.base_url,
        "api_key": fake.token,
        "tools": _tools(tools),
    }
    if not stream:
        choice = litellm.completion(**kwargs).choices[0]
        calls = choice.message.tool_calls or []
        return {
            "content": choice.message.content,
            "reasoning": getattr(choice.message, "reasoning_content", None),
            "tool_calls": [
                {"name": c.function.name, "arguments": json.loads(c.function.arguments)} for c in calls
            ],
            "finish_reason": choice.finish_reason,
        }
    content, reasoning, finish = [], [], None
    merged: dict[int, tuple[str, str]] = {}  # tool-call deltas merge by index, as OpenAI clients do
    for chunk in litellm.completion(**kwargs, stream=True):
        delta = chunk.choices[0].delta
        content.append(delta.content or "")
        reasoning.append(getattr(delta, "reasoning_content", None) or "")
        for c in delta.tool_calls or []:
            name, arguments = merged.get(c.index, (c.function.name, ""))
            merged[c.index] = (name, arguments + (c.function.arguments or ""))
        finish = chunk.choices[0].finish_reason or finish
    calls = [{"name": name, "arguments": json.loads(arguments)} for name, arguments in merged.values()]
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
        "tool_calls": calls,
        "finish_reason": finish,
    }


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_a_committed_fixture_replays_to_its_exact_answer(conol_fake, path, stream):
    recording = load_recording(path)
    conol_fake.add_scenario(replay_scenario(recording, name="fixture"))
    answer = _answer(conol_fake, "[[fake:fixture]]", recording["request"]["tools"], stream)
    assert answer == recording["expected"]
    # the fake sent the recorded lines verbatim (a trailing ping may not be due yet)
    sent = [e.raw.decode().removesuffix("\n\n") for e in conol_fake.last_session.events]
    lines = [e["line"] for e in recording["timeline"] if "line" in e]
    assert sent == lines[: len(sent)] and all(line in sent for line in lines if line.startswith("data:"))


def test_replay_keeps_the_original_timing(conol_fake):
    recording = load_recording(FIXTURES[0])
    conol_fake.add_scenario(replay_scenario(recording, name="fixture"))
    _answer(conol_fake, "[[fake:fixture]]", [], stream=False)
    session = conol_fake.last_session
    sent = [event.time - session.created_at for event in session.events]
    recorded = [e["t"] for e in recording["timeline"] if "line" in e]
    # never early (0.25 s of slack for where the clocks start), late only within the machine's bound
    assert all(r - 0.25 < s < r + bound(0.25) for s, r in zip(sent, recorded, strict=True)), (sent, recorded)
    status_times = [t - session.created_at for t, status in session.status_history if status == "completed"]
    recorded_end = recording["timeline"][-1]["t"]
    assert status_times and recorded_end - 0.25 < status_times[0] < recorded_end + bound(0.25)


def _record(fake: FakeConol, out: Path, prompt: str, *extra: str) -> dict[str, Any]:
    code = cli.main(
        [
            "record",
            "--token",
            fake.token,
            "--api-base",
            fake.base_url,
            "-o",
            str(out),
            "--prompt",
            prompt,
            *extra,
        ]
    )
    assert code == 0
    return json.loads(out.read_text())


def test_record_then_replay_gives_the_same_answer(conol_fake, tmp_path, capsys):
    prompt = "[[fake:hello]] I am Jane Doe, jane.doe@example.com"
    recording = _record(conol_fake, tmp_path / "hello.json", prompt, "--timezone", "Pacific/Chatham")
    out = capsys.readouterr().out
    assert (
        out.startswith("recorded 11 SSE lines and ")
        and "(ended by: committed message, status terminal)" in out
    )
    text = (tmp_path / "hello.json").read_text()
    recorded_id = conol_fake.last_session.id
    for personal in (
        conol_fake.token,
        "Jane",
        "jane.doe",
        "Pacific/Chatham",
        recorded_id,
        "system-reminder>\nYou are",
    ):
        assert personal not in text
    assert recording["format"] == RECORDING_FORMAT
    assert recording["expected"] == {
        "content": BUILTINS["hello"].final_text,
        "reasoning": BUILTINS["hello"].final_reasoning,
        "tool_calls": [],
        "finish_reason": "stop",
    }
    conol_fake.configure(replay_dir=str(tmp_path))
    for stream in (False, True):
        assert _answer(conol_fake, "[[fake:replay file=hello.json]]", [], stream) == recording["expected"]


def test_record_a_tool_call_and_replay_it(conol_fake, tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(_tools(["get_weather"])))
    recording = _record(conol_fake, tmp_path / "tool.json", "[[fake:tool_call]]", "--tools", str(tools))
    assert recording["request"]["tools"] == ["get_weather"]
    assert recording["expected"]["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    conol_fake.configure(replay_dir=str(tmp_path))
    assert (
        _answer(conol_fake, "[[fake:replay file=tool.json]]", ["get_weather"], False) == recording["expected"]
    )


def test_replay_refuses_files_outside_its_directory_and_bad_recordings(conol_fake, tmp_path):
    (tmp_path / "bad.json").write_text('{"format": "something else"}')
    conol_fake.configure(replay_dir=str(tmp_path))
    messages = {
        "../x.json": "is outside the replay directory",
        "bad.json": "is not a litellm-conol-recording/1 recording",
        "missing.json": "cannot read recording",
    }
    for name, message in messages.items():
        with pytest.raises(litellm.BadRequestError, match=message):
            _answer(conol_fake, f"[[fake:replay file={name}]]", [], False)


def test_record_without_a_session_fails_cleanly(conol_fake, tmp_path, capsys):
    conol_fake.configure(revoke_token=True)
    code = cli.main(
        [
            "record",
            "--token",
            conol_fake.token,
            "--api-base",
            conol_fake.base_url,
            "-o",
            str(tmp_path / "x.json"),
            "--prompt",
            "hi",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1 and not (tmp_path / "x.json").exists()
    assert "invalid or expired" in err and conol_fake.token not in out + err


async def test_the_recording_keeps_sse_lines_split_across_chunks_whole():
    import httpx

    from litellm_conol.client.recording import RecordingTransport
    from litellm_conol.core.protocol.endpoint import Endpoint

    async def chunks():
        for chunk in (b'data: {"a"', b":1}\n\n: ping\r\n", b"\n", b"data: 2\n", b"data: 3"):
            yield chunk

    async with httpx.AsyncClient() as client:
        transport = RecordingTransport(Endpoint("http://127.0.0.1:9", "tok"), client)
        passed = [chunk async for chunk in transport._tee(chunks())]
    assert b"".join(passed) == b'data: {"a":1}\n\n: ping\r\n\ndata: 2\ndata: 3'  # passed on untouched
    assert transport.lines() == ['data: {"a":1}', ": ping", "data: 2"]  # an unfinished line is not a line
