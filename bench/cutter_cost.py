"""What enforcing ``max_tokens`` costs on a long answer: ``python -m bench.cutter_cost`` (~5 s).

A 100 KB answer arrives as 1,000 cumulative snapshots (100 characters each); the cutter sees the
whole text after each one, as in a real session. Printed per tokenizer (LiteLLM's counter for a
Claude model and for a model on ``cl100k_base``): the milliseconds spent, how many characters the
tokenizer was given in all, and what one count of the whole answer costs, for three limits: just
above what the answer holds (never cut: the worst case for the counting while it grows), a cut at
80 % of it, and a cut at 1,000 tokens. Counting the whole text after every snapshot instead would
give the tokenizer ~50 MB (500 counts of the whole answer).
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from litellm_conol.core.answer.cutter import AnswerCutter, Cut
from litellm_conol.fake import long_text
from litellm_conol.provider.usage import answer_token_counter

ANSWER_CHARS = 100_000
SNAPSHOT_CHARS = 100


def feed(cutter: AnswerCutter, text: str) -> str | Cut:
    for end in range(SNAPSHOT_CHARS, len(text) + 1, SNAPSHOT_CHARS):
        shown = cutter.visible(text[:end])
        if isinstance(shown, Cut):
            return shown
    return cutter.final(text)


def main() -> None:
    text = long_text(ANSWER_CHARS)
    for model in ("claude-haiku-4-5", "deepseek-v4-pro"):
        count = answer_token_counter(model)
        total = count(text)  # also loads the tokenizer, outside the timings
        started = time.perf_counter()
        count(text)
        whole_ms = (time.perf_counter() - started) * 1000
        print(f"{model}: the answer is {total} tokens; one count of it takes {whole_ms:.0f} ms")
        limits = {"never cut": total + 50, "cut at 80 %": total * 8 // 10, "cut at 1,000": 1000}
        for label, limit in limits.items():
            cutter = AnswerCutter(max_tokens=limit, count_tokens=count)
            started = time.perf_counter()
            outcome = feed(cutter, text)
            elapsed_ms = (time.perf_counter() - started) * 1000
            assert cutter.tokens is not None
            kept = len(outcome.text if isinstance(outcome, Cut) else outcome)
            print(
                f"  max_tokens={limit} ({label}): {elapsed_ms:.0f} ms, tokenizer saw "
                f"{cutter.tokens.counted_chars:,} characters in {cutter.tokens.counts} counts; "
                f"answer kept: {kept:,} characters"
            )


if __name__ == "__main__":
    main()
