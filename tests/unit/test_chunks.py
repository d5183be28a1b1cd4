"""The chunk maker: what LiteLLM's bridges (the ``/v1/messages`` adapter, the ``/v1/responses``
bridge) need from our streamed chunks. Plain event lists in, chunks out; no I/O."""

from __future__ import annotations

import itertools

from litellm.llms.anthropic.pass_through.adapters.streaming_iterator import AnthropicStreamWrapper
from litellm.types.utils import Usage
from support.events import delta, msg, parsed, stage, tool_log

from litellm_conol.core.answer.assembler import Assembler
from litellm_conol.core.protocol.session_info import RunStats, SessionInfo
from litellm_conol.provider.chunks import ChunkMaker
from litellm_conol.provider.result_fields import result_fields

INFO = SessionInfo(session_id="s1", effective_model="claude-haiku-4-5", model_downgraded=False)
USAGE = Usage(prompt_tokens=7, completion_tokens=5, total_tokens=12)


def stream_of(*events, tools: frozenset[str] = frozenset({"get_weather"})) -> list:
    """The whole stream the handler yields for these events: opening, pieces, closing."""
    return stream_of_batches(*((event,) for event in events), tools=tools)


def stream_of_batches(*batches, tools=frozenset({"get_weather"}), hold_calls: bool = False) -> list:
    """As ``stream_of``, each batch the events that queued up together: the driver feeds them all to
    the assembler, then the maker gets their pieces at once."""
    ids = itertools.count(1)
    assembler = Assembler(client_tools=tools, new_call_id=lambda: f"call_{next(ids)}")
    maker = ChunkMaker(model="conol/claude-haiku-4-5")
    chunks = [maker.opening(INFO)]
    for batch in batches:
        pieces = [piece for event in parsed(*batch) for piece in assembler.feed(event)]
        chunks += maker.for_pieces(pieces, hold_calls=hold_calls)
    fields = result_fields(INFO, assembler, RunStats(ended_by="client tool call"))
    return chunks + maker.closing(assembler, fields, USAGE)


def _content(chunks) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks)


TEXT_THEN_CALL = (
    delta(stage(preview=[msg("Let me check.")])),
    delta(stage(preview=[msg("Let me check.")], logs=[tool_log("get_weather", {"city": "Paris"})])),
)


def test_every_chunk_of_a_stream_shares_one_id_and_the_last_has_the_finish_reason():
    chunks = stream_of(*TEXT_THEN_CALL)
    assert len({c.id for c in chunks}) == 1
    assert [c.choices[0].finish_reason for c in chunks][-1] == "tool_calls"
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])


def test_the_tool_call_delta_is_whole_with_index_id_name_and_arguments():
    calls = [call for c in stream_of(*TEXT_THEN_CALL) for call in c.choices[0].delta.tool_calls or []]
    first = calls[0]
    assert (first.index, first.id, first.type) == (0, "call_1", "function")
    assert (first.function.name, first.function.arguments) == ("get_weather", '{"city": "Paris"}')


def test_usage_and_fields_ride_on_the_chunk_before_the_finish():
    *_, summary, finish = stream_of(*TEXT_THEN_CALL)
    assert summary.usage == USAGE
    assert summary.provider_specific_fields["usage_estimated"] is True
    assert summary.provider_specific_fields["text_with_tool_calls"] == "Let me check."
    assert finish.choices[0].delta.content is None and not finish.choices[0].delta.tool_calls


def test_fields_only_chunks_after_a_tool_call_continue_it_emptily():
    """A content-less chunk after a tool call must not read as a new (empty) text block."""
    chunks = stream_of(
        *TEXT_THEN_CALL,
        # text the model writes after the call: content stays null, so it rides in a field
        delta(
            stage(
                preview=[msg("Let me check. Done.")],
                logs=[tool_log("get_weather", {"city": "Paris"})],
            )
        ),
    )
    after_call = chunks[chunks.index(next(c for c in chunks if c.choices[0].delta.tool_calls)) + 1 : -1]
    assert [c.provider_specific_fields.get("text_with_tool_calls") for c in after_call] == [
        " Done.",
        "Let me check. Done.",
    ]
    for chunk in after_call:
        (continuation,) = chunk.choices[0].delta.tool_calls
        assert (continuation.index, continuation.id, continuation.function.name) == (0, None, None)
        assert continuation.function.arguments == ""
        assert chunk.choices[0].delta.content is None


def test_fields_only_chunks_without_a_tool_call_are_plain_empty_deltas():
    chunks = stream_of(delta(stage(preview=[msg("Hello.")])))
    summary = chunks[-2]
    assert summary.choices[0].delta.tool_calls is None and summary.choices[0].delta.content == ""


def _anthropic_blocks(chunks) -> list[tuple]:
    """Run our chunks through LiteLLM's /v1/messages stream adapter; the blocks it opens, in order."""
    events = list(AnthropicStreamWrapper(completion_stream=chunks, model="conol/claude-haiku-4-5"))
    blocks: list[list] = []
    for event in events:
        if event["type"] == "content_block_start":
            block = event["content_block"]
            blocks.append([block["type"], block.get("name", "")])
        elif event["type"] == "content_block_delta":
            payload = event["delta"]
            blocks[-1][1] += (
                payload.get("text") or payload.get("partial_json") or payload.get("thinking") or ""
            )
    stop = [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"]
    return [tuple(b) for b in blocks] + [("stop", *stop)]


def test_the_messages_adapter_makes_a_text_and_a_tool_use_block_and_no_empty_text_block():
    assert _anthropic_blocks(stream_of(*TEXT_THEN_CALL)) == [
        ("text", "Let me check."),
        ("tool_use", 'get_weather{"city": "Paris"}'),
        ("stop", "tool_use"),
    ]


def test_the_messages_adapter_makes_one_tool_use_block_per_call():
    calls = [tool_log("get_weather", {"city": "Paris"}), tool_log("get_weather", {"city": "Tokyo"})]
    assert _anthropic_blocks(stream_of(delta(stage(logs=calls)))) == [
        ("tool_use", 'get_weather{"city": "Paris"}'),
        ("tool_use", 'get_weather{"city": "Tokyo"}'),
        ("stop", "tool_use"),
    ]


# The last snapshot and the tool call close together (an agent's turn): one batch for the maker.
LAST_PIECE_WITH_THE_CALL = (
    (delta(stage(preview=[msg("Let me")])),),
    (
        delta(stage(preview=[msg("Let me check.")])),
        delta(stage(preview=[msg("Let me check.")], logs=[tool_log("get_weather", {"city": "Paris"})])),
    ),
)


def test_text_before_a_tool_call_stays_content_when_both_arrive_in_one_batch():
    """The text's last piece came before the call: it is content, not text beside the call, so a
    client (and the /v1/messages adapter, which drops that field) gets the whole text."""
    chunks = stream_of_batches(*LAST_PIECE_WITH_THE_CALL)
    assert _content(chunks) == "Let me check."
    assert [(c.provider_specific_fields or {}).get("text_with_tool_calls") for c in chunks[1:-2]] == [
        None
    ] * 3
    assert _anthropic_blocks(chunks) == [
        ("text", "Let me check."),
        ("tool_use", 'get_weather{"city": "Paris"}'),
        ("stop", "tool_use"),
    ]


def test_held_tool_calls_end_the_content_in_the_order_they_came():
    """Calls held for validation are not streamed, yet text after one is not content either."""
    after = delta(
        stage(preview=[msg("Let me check. Done.")], logs=[tool_log("get_weather", {"city": "Paris"})])
    )
    chunks = stream_of_batches(*LAST_PIECE_WITH_THE_CALL, (after,), hold_calls=True)
    assert _content(chunks) == "Let me check."
    assert not any(c.choices[0].delta.tool_calls for c in chunks)
    assert [(c.provider_specific_fields or {}).get("text_with_tool_calls") for c in chunks[3:-2]] == [
        " Done."
    ]
