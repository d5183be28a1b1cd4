"""Recorded request pairs: what real clients resend as history, held against the session-reuse
fingerprint (``canonical_history`` / ``history_digest`` / ``split_new_turn`` / ``returned_assistant``).

Each fixture in ``tests/fixtures/request_pairs`` (format and recording: its README.md) holds real
consecutive requests of one client through the LiteLLM 1.108.7 proxy on the fake conol: the raw
client body, the ``messages`` our handler received (LiteLLM's translation: what the fingerprint sees),
the answer we bound (the arguments of ``returned_assistant``) and the answer as the client received
it. A pair is an earlier request and the next one of the same conversation.

What each client changes when it resends history, as recorded (handler view unless "raw"):

* **No client rewrote whitespace.** Every text was resent byte for byte: the answer's leading
  ``\\n``, trailing spaces and tab, its trailing newline, indented code, tool outputs with trailing
  spaces, tabs and CRLF (Codex keeps ``\\r\\n`` verbatim). A tool's *new* output is shaped by the
  client once (Claude Code trims a Bash output's trailing spaces, numbers Read lines and turns CRLF
  into LF, appends a ``<system-reminder>`` with the tokens left), then resent unchanged.
* **Tool-call arguments** come back as the same JSON value, never the same string: LiteLLM
  re-serialises ``tool_use.input`` (``/v1/messages``) and custom-tool ``input`` (``/v1/responses``)
  with ``json.dumps`` (``ensure_ascii``: ``ü`` becomes ``\\u00fc``). The openai chat SDK resends the
  string verbatim. Codex's custom tool ``exec`` (raw JavaScript) reaches us as ``{"content": code}``.
* **String vs parts:** an answer we returned as a string comes back as ``[{"type": "text"}]`` from
  ``/v1/responses`` (Codex, openai ``responses``); ``null`` for an answer with no text where we bound
  ``""``. A single text part equals the string; no client split or merged parts otherwise.
* **One assistant message per answer** on every route: LiteLLM folds a Responses ``reasoning`` +
  ``message`` + ``function_call``/``custom_tool_call`` run, and an Anthropic ``thinking`` + ``text`` +
  ``tool_use`` turn, into one message; no consecutive assistant messages appeared.
* **Reasoning added back:** Claude Code and the anthropic SDK resend ``thinking`` blocks with the
  ``signature: ""`` they received (LiteLLM: ``thinking_blocks`` + ``reasoning_content``); Codex and
  the openai ``responses`` pattern resend ``reasoning`` items (``reasoning_content``); the openai chat
  SDK's message object brings ``reasoning_content`` and ``provider_specific_fields`` (our own fields,
  session ids included) back. The openai chat streaming app drops reasoning.
* **cache_control moves:** Claude Code marks the last block of the last message; the next request
  moves it, so every earlier message loses it. Ids (``tool_call_id``, Responses item ids) are kept.
* **Order:** Claude Code sends parallel tool results in completion order (Bash before Read although
  Read was called first), in one user message (LiteLLM: one ``tool`` message each); resent so.
* **Images** (a PNG in the first user message; in Claude Code a Read tool result) arrive on every
  route as ``image_url`` parts with the same ``data:`` URL (Responses adds ``"detail": "auto"``, in
  both requests), resent byte for byte.
* **System prompt:** stable within a conversation and on ``claude -p --continue`` and
  ``codex exec resume --last`` (Claude Code's date, git status and environment live in the first
  user message, taken from the transcript on resume). Claude Code's first system block is
  ``x-anthropic-billing-header: cc_version=2.1.332.<3 hex, per conversation>; cc_entrypoint=cli|sdk-cli;``:
  an interactive conversation continued with ``-p`` changes it, and nothing else.

Text a client never received is not bound: on the non-streamed routes (openai chat, openai
``responses``, anthropic messages) text written alongside a tool call never reaches the client (chat:
``content: null`` and the text in ``text_with_tool_calls``; the others drop it), so the binding holds
the answer's text as streamed, or none (``_bound_text``). On a cold proxy LiteLLM's ``/v1/responses``
stream bridge lost such text too (Codex's first request): that turn starts a new session.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.recorded_pairs import FIXTURES, expand

from litellm_conol.reuse.fingerprint import (
    answered_refs,
    call_refs,
    canonical_history,
    history_digest,
    returned_assistant,
    split_new_turn,
)

STREAM_ROUTE = ":streamGenerateContent"  # Gemini streams by route, not by a body field
SCOPE, SETTINGS = "scope", "settings"

LOST_BY_LITELLM = (
    "LiteLLM's /v1/responses stream bridge lost the text streamed before the tool call (a cold proxy)"
)
GEMINI_RESUME = (
    "Gemini CLI 0.61.0's --resume rebuilds the history with the first tool result twice: the client "
    "holds a conversation conol's session never ran"
)
BILLING_HEADER = (
    "Claude Code's system billing header says cc_entrypoint=cli in an interactive session and sdk-cli "
    "under -p: the conversation is the same, the system message is not"
)
# Pairs whose next request does not continue the session we bind, by fixture and pair index, and why.
KNOWN_MISMATCHES: dict[str, str] = {
    "codex-exec-0": LOST_BY_LITELLM,
    "claude-code-modes-1": BILLING_HEADER,
    "gemini-cli-3": GEMINI_RESUME,
}
# Pairs whose next request holds other than what the client received, and why.
CLIENT_REWRITES = {"claude-code-modes-1": BILLING_HEADER, "gemini-cli-3": GEMINI_RESUME}


@dataclass(frozen=True)
class Pair:
    id: str
    note: str
    earlier: list[Any]  # the earlier request's messages, as the handler received them
    text: str  # the answer we bound: returned_assistant(text, calls)
    calls: list[tuple[str, str, str]]
    received_text: str  # the answer's text as the client received it
    streamed: bool  # the earlier request was streamed
    next: list[Any]  # the next request's messages, as the handler received them


def _received_text(received: dict[str, Any]) -> str:
    if "parts" in received:  # generateContent: Gemini parts
        return "".join(part.get("text", "") for part in received["parts"])
    if "content" in received:  # /v1/messages: content blocks
        return "".join(b.get("text", "") for b in received["content"] if b["type"] == "text")
    if "message" in received:  # /v1/chat/completions
        return str(received["message"]["content"] or "")
    return "".join(  # /v1/responses: output items
        part.get("text", "")
        for item in received["output"]
        if item["type"] == "message"
        for part in item["content"]
    )


def _load(path: Path) -> list[Pair]:
    data = json.loads(path.read_text())
    parts = [expand(p, data["strings"]) for p in data["parts"]]
    requests = data["requests"]
    pairs = []
    for index, pair in enumerate(data["pairs"]):
        earlier, later = requests[pair["earlier"]], requests[pair["next"]]
        returned = earlier["returned"]
        pairs.append(
            Pair(
                id=f"{path.stem}-{index}",
                note=pair["note"],
                earlier=[parts[i] for i in earlier["handler"]],
                text=returned["text"],
                calls=[tuple(call) for call in returned["tool_calls"]],
                received_text=_received_text(earlier["received"]),
                streamed=bool(earlier["raw"].get("stream")) or earlier["route"].endswith(STREAM_ROUTE),
                next=[parts[i] for i in later["handler"]],
            )
        )
    return pairs


PAIRS = [pair for path in sorted(FIXTURES.glob("*.json")) for pair in _load(path)]


def _params(expected_mismatches: dict[str, str]) -> list[Any]:
    return [
        pytest.param(
            pair,
            id=pair.id,
            marks=[pytest.mark.xfail(strict=True, reason=expected_mismatches[pair.id])]
            if pair.id in expected_mismatches
            else [],
        )
        for pair in PAIRS
    ]


def _history(pair: Pair) -> list[Any]:
    split = split_new_turn(pair.next)
    assert split is not None, f"{pair.id}: no new turn found"
    history, new = split
    assert len(history) == len(pair.earlier) + 1, (
        f"{pair.id}: the history is not the earlier request + one answer"
    )
    assert all(message["role"] in ("user", "tool") for message in new)
    return history


def test_the_fixtures_hold_every_client_and_route():
    stems = {path.stem for path in FIXTURES.glob("*.json")}
    assert stems == {
        "claude-code-print",
        "claude-code-modes",
        "codex-exec",
        "gemini-cli",
        "openai-sdk-chat",
        "openai-sdk-chat-stream",
        "openai-sdk-responses",
        "anthropic-sdk-messages",
        "anthropic-sdk-messages-stream",
    }
    assert len(PAIRS) == 43
    assert set(KNOWN_MISMATCHES) <= {pair.id for pair in PAIRS}


@pytest.mark.parametrize("pair", _params(KNOWN_MISMATCHES))
def test_the_next_request_continues_the_bound_history(pair: Pair):
    """What the handler does: the next request's history fingerprints as the earlier request plus
    the answer we bind: its text as streamed, or none when a non-streamed answer has tool calls
    (its content is null: reuse/session_reuse.py ``bind``)."""
    bound = [*pair.earlier, returned_assistant(_bound_text(pair), pair.calls)]
    history = _history(pair)
    assert canonical_history(history) == canonical_history(bound)
    assert history_digest(SCOPE, SETTINGS, history) == history_digest(SCOPE, SETTINGS, bound)


@pytest.mark.parametrize("pair", _params(CLIENT_REWRITES))
def test_the_history_holds_what_the_client_received(pair: Pair):
    """With the text the client received bound instead, every pair but the client's own rewrites
    (the mode switch, the resume) matches."""
    bound = [*pair.earlier, returned_assistant(pair.received_text, pair.calls)]
    history = _history(pair)
    assert canonical_history(history) == canonical_history(bound)
    assert history_digest(SCOPE, SETTINGS, history) == history_digest(SCOPE, SETTINGS, bound)


@pytest.mark.parametrize("pair", _params({}))
def test_the_next_turn_answers_the_calls_we_bound(pair: Pair):
    """What conol waits on (the calls we returned, ``call_refs``) is what the next turn's tool results
    answer, whatever ids the client resent (Gemini CLI: ``call_<name>`` for every call)."""
    split = split_new_turn(pair.next)
    assert split is not None
    new = canonical_history(pair.next)[len(split[0]) :]
    assert answered_refs(new) == set(call_refs(returned_assistant("", pair.calls)))


def _bound_text(pair: Pair) -> str:
    return pair.text if pair.streamed or not pair.calls else ""


def test_the_unreceived_text_is_what_the_client_lacks():
    """The text the client did not receive is exactly what a non-streamed answer with tool calls
    carried (we no longer bind it), plus what LiteLLM's responses bridge lost."""
    differing = {pair.id for pair in PAIRS if pair.text != pair.received_text}
    not_streamed = {pair.id for pair in PAIRS if _bound_text(pair) != pair.text}
    lost = {pair_id for pair_id, why in KNOWN_MISMATCHES.items() if why == LOST_BY_LITELLM}
    assert differing == not_streamed | lost
    assert all(pair.received_text == "" for pair in PAIRS if pair.id in differing)


# --- lossless: changes no client made must change the fingerprint -----------------------------------


def _retext(message: dict[str, Any], change: Callable[[str], str]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": change(content)}
    if isinstance(content, list):
        return {
            **message,
            "content": [{**p, "text": change(p["text"])} if "text" in p else p for p in content],
        }
    return message


def _edit_text(role: str, old: str, new: str) -> Callable[[list[Any]], list[Any] | None]:
    def edit(history: list[Any]) -> list[Any] | None:
        changed = [_retext(m, lambda t: t.replace(old, new)) if m["role"] == role else m for m in history]
        return changed if changed != history else None

    return edit


def _edit_image(drop: bool) -> Callable[[list[Any]], list[Any] | None]:
    def edit(history: list[Any]) -> list[Any] | None:
        history = copy.deepcopy(history)
        for message in history:
            parts = message.get("content")
            for index, part in enumerate(parts if isinstance(parts, list) else []):
                if part.get("type") == "image_url":
                    if drop:
                        del parts[index]
                    else:  # one base64 character of the picture, not its size
                        url = part["image_url"]["url"]
                        head, data = url.split(",", 1)
                        part["image_url"]["url"] = (
                            f"{head},{data[:20]}{'B' if data[20] != 'B' else 'C'}{data[21:]}"
                        )
                    return history
        return None

    return edit


def _swap_results_sharing_an_id(history: list[Any]) -> list[Any] | None:
    """The outputs of two calls the client names alike (Gemini CLI's ``call_<name>``) swapped."""
    for index in range(len(history) - 1):
        first, second = history[index], history[index + 1]
        alike = first["role"] == second["role"] == "tool" and first["tool_call_id"] == second["tool_call_id"]
        if alike and first["content"] != second["content"]:
            swapped = list(history)
            swapped[index] = {**first, "content": second["content"]}
            swapped[index + 1] = {**second, "content": first["content"]}
            return swapped
    return None


EDITS: dict[str, tuple[Callable[[list[Any]], list[Any] | None], str | None]] = {
    "answer code re-indented": (_edit_text("assistant", "\n    return 1", "\n  return 1"), None),
    "answer double space made single": (_edit_text("assistant", "Done.  Here", "Done. Here"), None),
    "tool output tab made a space": (_edit_text("tool", "second\tline", "second line"), None),
    "tool output line unindented": (_edit_text("tool", "\n  22 °C", "\n22 °C"), None),
    "image byte changed": (_edit_image(drop=False), None),
    "image dropped": (_edit_image(drop=True), None),
    "results of two calls named alike swapped": (_swap_results_sharing_an_id, None),
}


def _edit_params() -> list[Any]:
    """Each edit on the longest matching history of each fixture that has what it edits."""
    params = []
    for name, (edit, known) in EDITS.items():
        longest: dict[str, Pair] = {}
        for pair in PAIRS:
            if pair.id not in KNOWN_MISMATCHES and edit(_history(pair)) is not None:
                longest[pair.id.rsplit("-", 1)[0]] = pair  # pairs run in conversation order
        for pair in longest.values():
            marks = [pytest.mark.xfail(strict=True, reason=known)] if known else []
            slug = re.sub(r"\W+", "-", name)
            params.append(pytest.param(pair, name, id=f"{pair.id}-{slug}", marks=marks))
    return params


@pytest.mark.parametrize(("pair", "edit"), _edit_params())
def test_a_change_no_client_makes_changes_the_fingerprint(pair: Pair, edit: str):
    bound = [*pair.earlier, returned_assistant(pair.received_text, pair.calls)]
    edited = EDITS[edit][0](_history(pair))
    assert edited is not None
    assert history_digest(SCOPE, SETTINGS, edited) != history_digest(SCOPE, SETTINGS, bound)
