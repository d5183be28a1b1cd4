"""Unit tests of ``stop`` / ``max_tokens`` in the pure core: plain strings and event lists."""

from __future__ import annotations

import litellm
import pytest
from support.events import delta, msg, parsed, stage, tool_log

from litellm_conol.core.answer.assembler import Assembler, ClientToolCall, TextDelta
from litellm_conol.core.answer.cutter import AnswerCutter, Cut, StopFinder, TokenBudget
from litellm_conol.core.protocol.end_policy import EndPolicy, Finish, Timing
from litellm_conol.fake import long_text
from litellm_conol.provider.usage import answer_token_counter

pytestmark = pytest.mark.timeout(30)


def play(cutter: AnswerCutter, snapshots: list[str], *, end: bool = True) -> tuple[list[str], str | Cut]:
    """What is shown after each snapshot (the text so far), and the outcome (a cut, or the end)."""
    shown: list[str] = []
    for text in snapshots:
        result = cutter.visible(text)
        if isinstance(result, Cut):
            return shown, result
        shown.append(result)
    return shown, cutter.final(snapshots[-1]) if end else shown[-1]


def words(text: str) -> int:
    """A toy tokenizer: every word (and the space before it) is one token; each covers >= 1 byte."""
    return len(text.split())


# --- stop ---------------------------------------------------------------------------------------

STOP = "<|end|>"
FULL = f"The answer is 42.{STOP} and text nobody sees"


@pytest.mark.parametrize("split", range(1, len(FULL)))
def test_a_stop_sequence_split_at_any_point_across_two_snapshots_is_cut_and_never_shown(split):
    shown, outcome = play(AnswerCutter(stop=[STOP]), [FULL[:split], FULL])
    assert outcome == Cut("The answer is 42.", "stop")
    for text in shown:
        assert "The answer is 42.".startswith(text)  # no part of the stop sequence ever shown
    start = FULL.index(STOP)
    if split <= start:
        assert shown == [FULL[:split]]  # nothing held back that cannot start the stop sequence
    elif split < start + len(STOP):
        assert shown == [FULL[:start]]  # "…42.<|e": the tail waits, it may be the stop sequence


def test_every_split_of_the_stop_sequence_over_many_one_character_snapshots():
    snapshots = [FULL[:i] for i in range(1, len(FULL) + 1)]
    shown, outcome = play(AnswerCutter(stop=[STOP]), snapshots)
    assert outcome == Cut("The answer is 42.", "stop")
    assert shown[-1] == "The answer is 42."


def test_the_earliest_of_several_stop_sequences_wins():
    cutter = AnswerCutter(stop=["world", "lo", "zzz"])
    assert play(cutter, ["Hel", "Hello world"])[1] == Cut("Hel", "stop")
    assert play(AnswerCutter(stop=["world", "o w"]), ["Hello world"])[1] == Cut("Hell", "stop")


def test_overlapping_stop_sequence_ab_in_aab():
    shown, outcome = play(AnswerCutter(stop=["ab"]), ["a", "aa", "aab"])
    assert shown == ["", "a"]  # each "a" waits until the next character says it is not "ab"
    assert outcome == Cut("a", "stop")


def test_a_held_tail_is_released_as_soon_as_it_cannot_be_a_stop_sequence():
    shown, outcome = play(AnswerCutter(stop=["END"]), ["The EN", "The ENT", "The ENTRY"])
    assert shown == ["The ", "The ENT", "The ENTRY"]
    assert outcome == "The ENTRY"


def test_the_natural_end_releases_the_held_tail():
    shown, outcome = play(AnswerCutter(stop=["END", "STOP"]), ["Ready to ST"])
    assert shown == ["Ready to "]
    assert outcome == "Ready to ST"


def test_the_tail_held_is_the_longest_prefix_of_any_stop_sequence():
    finder = StopFinder(["abc", "bcd", "x"])
    assert finder.held_back("zzab") == 2
    # "abc" is there whole (found at 2), and its tail "bc" may still start "bcd": 2 held
    assert finder.find("zzabc") == 2
    assert finder.held_back("zzabc") == 2
    assert finder.held_back("zzbc") == 2
    assert finder.held_back("zzq") == 0


def test_a_stop_sequence_at_the_very_start_gives_an_empty_answer():
    assert play(AnswerCutter(stop=["Hi"]), ["H", "Hi there"])[1] == Cut("", "stop")


def test_a_rewritten_text_is_scanned_again():
    cutter = AnswerCutter(stop=["##"])
    assert cutter.visible("one # two") == "one # two"
    assert cutter.visible("one ## two") == Cut("one ", "stop")


# --- max_tokens ---------------------------------------------------------------------------------


def test_max_tokens_cuts_at_exactly_that_many_tokens():
    text = " ".join(f"w{i}" for i in range(200))
    snapshots = [text[:i] for i in range(50, len(text) + 1, 37)] + [text]
    shown, outcome = play(AnswerCutter(max_tokens=25, count_tokens=words), snapshots)
    assert isinstance(outcome, Cut) and outcome.reason == "length"
    assert outcome.text == " ".join(f"w{i}" for i in range(25)) + " "  # the longest prefix of 25 words
    assert all(outcome.text.startswith(s) for s in shown)  # nothing shown is taken back


def test_a_short_answer_is_never_counted():
    budget = TokenBudget(100, words)
    for end in range(1, 100):
        assert budget.check("x" * end) is None
    assert budget.counts == 0  # 99 bytes cannot hold more than 99 tokens


def test_the_same_text_again_is_not_counted_again():
    budget = TokenBudget(10, words)
    assert budget.check("one two three four five six seven eight nine ten") is None
    counts = budget.counts
    for _ in range(5):  # events that add reasoning or tools, not answer text
        assert budget.check("one two three four five six seven eight nine ten") is None
    assert budget.counts == counts


def test_an_answer_that_ends_within_max_tokens_is_whole():
    _, outcome = play(AnswerCutter(max_tokens=10, count_tokens=words), ["one two", "one two three four"])
    assert outcome == "one two three four"


def test_a_rewritten_text_is_counted_again():
    cutter = AnswerCutter(max_tokens=3, count_tokens=words)
    assert cutter.visible("one two three") == "one two three"
    assert cutter.visible("uno dos") == "uno dos"  # rewritten: what was counted is forgotten
    assert cutter.visible("uno dos tres cuatro") == Cut("uno dos tres ", "length")


def test_stop_and_max_tokens_together_whichever_comes_first():
    text = "a b c d e f STOP g h"
    assert play(AnswerCutter(stop=["STOP"], max_tokens=3, count_tokens=words), [text])[1] == Cut(
        "a b c ", "length"
    )
    assert play(AnswerCutter(stop=["STOP"], max_tokens=50, count_tokens=words), [text])[1] == Cut(
        "a b c d e f ", "stop"
    )


def test_max_tokens_without_a_counter_is_a_programming_error():
    with pytest.raises(ValueError, match="token counter"):
        AnswerCutter(max_tokens=3)


@pytest.mark.parametrize("limit", [1, 7, 100, 1000])
def test_max_tokens_with_litellms_counter_gives_exactly_that_many_tokens(limit):
    count = answer_token_counter("claude-haiku-4-5")
    text = long_text(12_000)
    cutter = AnswerCutter(max_tokens=limit, count_tokens=count)
    _, outcome = play(cutter, [text[:i] for i in range(300, len(text) + 1, 300)])
    assert isinstance(outcome, Cut) and outcome.reason == "length"
    assert count(outcome.text) == limit < count(text[: len(outcome.text) + 1])
    # not counted whole once per snapshot (40 × 6 KB): the tokenizer saw a few times the answer
    assert cutter.tokens is not None and cutter.tokens.counted_chars <= 6 * len(outcome.text) + 2000


def test_a_long_answer_is_counted_a_few_times_not_once_per_snapshot():
    """100 KB in 1,000 snapshots, a limit just above what it holds: the tokenizer sees ~200 KB,
    not the 50 MB of counting every snapshot whole."""
    count = answer_token_counter("claude-haiku-4-5")
    text = long_text(100_000)
    limit = count(text) + 50
    cutter = AnswerCutter(max_tokens=limit, count_tokens=count)
    _, outcome = play(cutter, [text[:i] for i in range(100, len(text) + 1, 100)])
    assert outcome == text
    assert cutter.tokens is not None and cutter.tokens.counted_chars <= 3 * len(text)


# --- in the assembler (the depth both the streamed and non-streamed answer come from) --------------


def feed(assembler: Assembler, *texts: str, extra: list | None = None) -> list:
    events = [delta(stage(preview=[msg(t)])) for t in texts] + (extra or [])
    return assembler.feed_all(parsed(*events))


def streamed(pieces) -> str:
    return "".join(p.text for p in pieces if isinstance(p, TextDelta))


def test_assembler_streams_only_what_is_before_the_stop_sequence_and_then_ignores_events():
    a = Assembler(cutter=AnswerCutter(stop=["[END]"]))
    pieces = feed(a, "Pass: sword", "Pass: swordfish.[E", "Pass: swordfish.[END] secret", "Pass: more")
    assert streamed(pieces) == "Pass: swordfish." == a.final_text
    assert a.cut == Cut("Pass: swordfish.", "stop")
    assert a.finish() == []


def test_assembler_finish_releases_the_held_tail():
    a = Assembler(cutter=AnswerCutter(stop=["[END]"]))
    pieces = feed(a, "Almost [E")
    assert streamed(pieces) == "Almost "
    assert a.finish() == [TextDelta("[E")]
    assert a.final_text == "Almost [E" and a.cut is None


def test_reasoning_is_neither_cut_nor_counted():
    a = Assembler(cutter=AnswerCutter(stop=["[END]"], max_tokens=2, count_tokens=words))
    a.feed_all(parsed(delta(stage(preview=[msg("think [END] about it a lot", "thinking"), msg("One")]))))
    assert a.final_reasoning == "think [END] about it a lot"
    assert a.cut is None and a.final_text == "One"


def test_a_cut_before_a_tool_call_means_no_tool_call():
    a = Assembler(client_tools=frozenset({"get_weather"}), cutter=AnswerCutter(stop=["[END]"]))
    pieces = feed(
        a, "Checking.[END]", extra=[delta(stage(logs=[tool_log("get_weather", {"city": "Paris"})]))]
    )
    assert not any(isinstance(p, ClientToolCall) for p in pieces)
    assert a.tool_calls == [] and a.final_text == "Checking."


def test_text_held_back_before_a_tool_call_is_released_when_the_turn_ends():
    a = Assembler(client_tools=frozenset({"get_weather"}), cutter=AnswerCutter(stop=["[END]"]))
    pieces = feed(
        a, "Let me check [E", extra=[delta(stage(logs=[tool_log("get_weather", {"city": "Paris"})]))]
    )
    assert streamed(pieces) == "Let me check " and [
        p.name for p in pieces if isinstance(p, ClientToolCall)
    ] == ["get_weather"]
    assert a.finish() == [TextDelta("[E")]
    assert a.final_text == "Let me check [E" and a.cut is None


def test_the_end_policy_finishes_at_once_on_a_cut():
    policy = EndPolicy(Timing(), now=0.0)
    assert policy.next_step(0.0, cut="stop sequence") == Finish("stop sequence")
    policy.on_definitive("done event")  # the cut is why the answer ended, whatever came with it
    assert policy.next_step(0.0, cut="max_tokens") == Finish("max_tokens")


def test_litellm_is_the_counter():
    # the counter used for max_tokens is LiteLLM's, for the model (claude: its own tokenizer)
    assert answer_token_counter("claude-haiku-4-5")("Hello there") == litellm.token_counter(
        model="claude-haiku-4-5", text="Hello there", count_response_tokens=True
    )
