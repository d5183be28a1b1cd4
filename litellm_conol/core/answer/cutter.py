"""``stop`` and ``max_tokens``, enforced on the answer text as it grows. Pure: no I/O, no globals.

conol has neither knob, so the answer is cut here. The :class:`AnswerCutter` sees the whole answer
text after every event (conol's snapshots are cumulative) and says how much of it may be shown, or
where the answer ends:

* ``stop``: the answer ends right before the first occurrence of any stop sequence, also one that
  straddles two snapshots. Text that might be the start of a stop sequence is held back (only the
  longest tail that is a prefix of one), and released as soon as it cannot be one, or at the end.
* ``max_tokens``: the answer ends after that many tokens of the injected counter (LiteLLM's token
  counter for the model). Counting is avoided while it cannot matter: a token covers at least one
  byte of UTF-8, so a text of at most ``limit`` bytes is within the limit; after an exact count,
  text appended adds at most one token per byte (plus a little for the last word being re-split).
  Only when that bound passes the limit is the text counted again, and the cut point is then found
  by interpolating between the last count under the limit and the first over it.

Only the answer text is cut and counted: not the reasoning, not tool calls (see
docs/tools-and-structured-output.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

CountTokens = Callable[[str], int]
CutReason = Literal["stop", "length"]

# Text counted in two parts may count a little more or less than counted whole: the word cut in
# two, and (LiteLLM counts in 1,024-character chunks) one token per chunk boundary that moved. The
# bound allows this many tokens per junction, plus one per 1,024 characters of the new part.
JUNCTION_SLACK = 4
COUNTER_CHUNK = 1024


@dataclass(frozen=True, slots=True)
class AnswerLimits:
    """What the request asked for: stop sequences, and at most this many answer tokens."""

    stop: tuple[str, ...] = ()
    max_tokens: int | None = None

    @property
    def requested(self) -> bool:
        return bool(self.stop) or self.max_tokens is not None


@dataclass(frozen=True, slots=True)
class Cut:
    """Where the answer ends: its final text, and why (the OpenAI ``finish_reason``)."""

    text: str
    reason: CutReason


class StopFinder:
    """The first occurrence of any stop sequence in a growing text, scanning each part once."""

    __slots__ = ("_longest", "_seen", "stops")

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(stops)
        self._longest = max((len(s) for s in self.stops), default=0)
        self._seen = ""

    def find(self, text: str) -> int | None:
        """Where the earliest stop sequence in ``text`` starts, or ``None``."""
        if not self.stops:
            return None
        # Only occurrences that end in the new part are new; a rewritten text is scanned again.
        start = max(0, len(self._seen) - self._longest + 1) if text.startswith(self._seen) else 0
        self._seen = text
        hits = [i for i in (text.find(stop, start) for stop in self.stops) if i >= 0]
        return min(hits) if hits else None

    def held_back(self, text: str) -> int:
        """Length of the longest tail of ``text`` that is a (proper) prefix of a stop sequence."""
        for size in range(min(self._longest - 1, len(text)), 0, -1):
            tail = text[-size:]
            if any(stop.startswith(tail) for stop in self.stops):
                return size
        return 0


class TokenBudget:
    """Cuts a growing text at ``limit`` tokens of ``count``, counting as little as it can.

    An upper bound of the text's count is kept: the count of a prefix (the anchor) plus a bound of
    the rest. The rest is bounded by its UTF-8 length while that is enough (a token covers at
    least one byte), else by counting only the rest; only when that passes the limit is the whole
    text counted, and only when the whole is over the limit is the cut point searched.
    """

    def __init__(self, limit: int, count: CountTokens) -> None:
        self.limit = limit
        self._count = count
        self.counts = 0  # how often the tokenizer ran (for tests and the benchmark)
        self.counted_chars = 0  # how many characters it was given in all
        self._reset()

    def _reset(self) -> None:
        self._text = ""  # the text last checked; all of it is within the limit
        self._anchor_len = 0  # text[:anchor_len] has at most anchor_tokens tokens
        self._anchor_tokens = 0
        self._bytes_since_anchor = 0

    def check(self, text: str) -> str | None:
        """``None`` while ``text`` is within the limit; else the longest prefix that is."""
        if not text.startswith(self._text):
            self._reset()  # rewritten: what was counted no longer holds
        checked = self._text
        if len(text) == len(checked):
            return None  # nothing new (an event of reasoning or tools): still within the limit
        self._bytes_since_anchor += _utf8_len(text[len(checked) :])
        self._text = text
        rest = len(text) - self._anchor_len
        slack = JUNCTION_SLACK + rest // COUNTER_CHUNK if self._anchor_len else 0
        if self._anchor_tokens + slack + self._bytes_since_anchor <= self.limit:
            return None
        bound = self._anchor_tokens + slack + self._counted(text[self._anchor_len :])
        if bound <= self.limit:
            self._set_anchor(len(text), bound)
            return None
        whole = bound if not self._anchor_len else self._counted(text)  # from 0 the part is the whole
        if whole <= self.limit:
            self._set_anchor(len(text), whole)
            return None
        return text[: self._cut_point(text, len(checked), whole)]

    def _set_anchor(self, length: int, tokens: int) -> None:
        self._anchor_len, self._anchor_tokens, self._bytes_since_anchor = length, tokens, 0

    def _counted(self, text: str) -> int:
        self.counts += 1
        self.counted_chars += len(text)
        return self._count(text)

    def _cut_point(self, text: str, within: int, over: int) -> int:
        """The largest ``k`` with ``count(text[:k]) <= limit``, between ``within`` (the text last
        checked, within the limit and maybe shown already: never taken back) and the whole text.

        A whole count costs the whole text, so there are few: the cut is first estimated by
        counting only the text after the anchor, then checked with two whole counts (the prefix
        and one character more). Should the estimate miss, probes go on: interpolated (token counts
        grow almost linearly with the text), one character on from a prefix of exactly ``limit``
        tokens (the next token usually starts at the space after a word), and a bisection step
        whenever a probe does not halve the range, which bounds the worst case.
        """
        low, high = within, len(text)
        # for interpolation only: the anchor's count stands in for the count of text[:within]
        low_count, high_count = min(self.limit, self._anchor_tokens), over
        estimate = self._estimated_cut(text, within, over)
        for probe in (estimate, estimate + 1):
            if low < probe < high:
                tokens = self._counted(text[:probe])
                if tokens <= self.limit:
                    low, low_count = probe, tokens
                else:
                    high, high_count = probe, tokens
        bisect = False
        while high - low > 1:
            span = high - low
            if bisect:
                guess = (low + high) // 2
            elif low_count == self.limit and low > within:  # the next token starts at a space
                guess = low + 1 if text[low].isspace() else _word_end(text, low + 1, high)
            else:  # where the count would pass the limit if it grew evenly over the range
                share = (self.limit + 0.5 - low_count) / max(1, high_count - low_count)
                guess = _word_end(text, min(high - 1, low + max(1, int(span * share))), high)
            tokens = self._counted(text[:guess])
            if tokens <= self.limit:
                low, low_count = guess, tokens
            else:
                high, high_count = guess, tokens
            bisect = (high - low) * 2 > span and not (low_count == self.limit and guess == low)
        return low

    def _estimated_cut(self, text: str, within: int, over: int) -> int:
        """Where the cut probably is, counting only text after the anchor: the whole text's count
        minus its part after the anchor stands in for the anchor's count."""
        base = self._anchor_len
        offset = over - self._counted(text[base:])
        low, high = within, len(text)
        while high - low > 1:
            middle = (low + high) // 2
            if offset + self._counted(text[base:middle]) <= self.limit:
                low = middle
            else:
                high = middle
        return low


def _word_end(text: str, at: int, high: int) -> int:
    """The end of the word ``at`` falls in (a token seldom spans it), if before ``high``; else ``at``."""
    end = at
    while end < high and not text[end].isspace():
        end += 1
    return end if end < high else at


def _utf8_len(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


class AnswerCutter:
    """``stop`` and ``max_tokens`` for one answer: feed it the whole answer text as it grows."""

    def __init__(
        self,
        stop: Sequence[str] = (),
        max_tokens: int | None = None,
        count_tokens: CountTokens | None = None,
    ) -> None:
        self.stops = StopFinder(stop)
        self.tokens: TokenBudget | None = None
        if max_tokens is not None:
            if count_tokens is None:
                raise ValueError("max_tokens needs a token counter")
            self.tokens = TokenBudget(max_tokens, count_tokens)

    def visible(self, text: str) -> str | Cut:
        """While the answer runs: the part of ``text`` that may be shown now, or where it ends."""
        return self._cut(text, final=False)

    def final(self, text: str) -> str | Cut:
        """The answer ended on its own: all of ``text`` (nothing is held back any more), or a cut."""
        return self._cut(text, final=True)

    def _cut(self, text: str, *, final: bool) -> str | Cut:
        stop_at = self.stops.find(text)
        if stop_at is not None:
            shown = text[:stop_at]
        elif final:
            shown = text
        else:
            shown = text[: len(text) - self.stops.held_back(text)]
        if self.tokens is not None:
            within = self.tokens.check(shown)
            if within is not None:
                return Cut(within, "length")
        return Cut(shown, "stop") if stop_at is not None else shown
