"""What the reuse differential test checks request by request, with reuse on, beyond equal answers:
what only the fake's records and the answer's fields can show (``support.reuse_runs`` calls it).

* two callers never touch one session;
* a request continues a session (``POST /api/sessions/{id}/messages``) only when its history is the
  caller's previous exchange, answered in full (not cut, no call dropped), plus new messages (or that
  history with line endings and trailing spaces rewritten);
* reuse happens where it may: a plain new user message after a plain answer, and tool results
  answering exactly the previous answer's calls (with a user message after them or not), continue the
  session when the previous answer was bound, on a healthy upstream (no injected failure in the
  request, no 404 on a follow-up before it, the caller's session not expired, no fail-safe before);
* a session is left unbound only for a reason the conversation or the reading explains (a cut, a call
  the client did not get, stage-less turns, what conol wrote after the client stopped reading);
* no new session follows a turn POST answered 5xx in the same request (conol may have taken the turn:
  a second session would bill it twice).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from litellm_conol.fake import FakeConol, RequestRecord
from support.reuse_conversations import Conversation, Turn, normalised_history
from support.reuse_dx import SEARCH_ASK, WEATHER_ASK, Reading

SESSION_PATH = re.compile(r"/api/sessions/([^/]+)")
Expect = tuple[Literal["must", "must not"], str] | None  # None: either is right


@dataclass
class Exchange:
    """A caller's request that was answered, and what its next request may do with its session."""

    messages: list[dict[str, Any]]
    answer: dict[str, Any] | None
    fields: dict[str, Any]
    turn: Turn
    cut: str | None

    @property
    def calls(self) -> list[dict[str, Any]]:
        return list((self.answer or {}).get("tool_calls") or ())

    @property
    def whole(self) -> bool:
        """Not cut, no call dropped: conol holds what the client holds."""
        asked = WEATHER_ASK.fullmatch(self.turn.user_text)
        dropped = asked is not None and 0 < len(self.calls) < len(set(asked.group(1).split(", ")))
        # every dx text answer is longer than MAX_TOKENS and holds STOP: a cut always cuts it
        return not (self.cut is not None and not self.calls) and not dropped


@dataclass
class Checker:
    fake: FakeConol
    reading: Reading
    conversation: Conversation
    reuse: bool
    trace: Any  # support.reuse_runs.Trace
    last: dict[str, Exchange | None] = field(default_factory=dict)
    touched: dict[str, set[str]] = field(default_factory=dict)
    expired: set[str] = field(default_factory=set)  # callers whose session expired since their last exchange
    follow_ups_may_be_off: bool = False  # a follow-up met a 404: conol may have none
    unverified: bool = False  # the fail-safe ran: follow-ups on this upstream are off for a while

    def injected(self, failure: tuple[str, int]) -> None:
        kind, status = failure
        if kind == "gone":
            self.expired.update(self.conversation.callers)
        if status == 404 and kind != "create":
            self.follow_ups_may_be_off = True

    def expectation(
        self, caller: str, messages: list[dict[str, Any]], failure: tuple[str, int] | None, *, retrying: bool
    ) -> Expect:
        """Whether the request must continue its session, must not (with why), or may do either."""
        if not self.reuse:
            return ("must not", "reuse is off")
        last = self.last.get(caller)
        if last is None or last.answer is None:
            return ("must not", "the caller has no earlier exchange")
        held = [*last.messages, last.answer]
        extends = len(messages) > len(held) and messages[: len(held)] == held
        rewritten = len(messages) > len(held) and normalised_history(messages[: len(held)]) == (
            normalised_history(held)
        )
        if not (extends or rewritten):
            return ("must not", "the history is not the caller's previous exchange plus new messages")
        if not last.whole:
            return ("must not", "the previous answer was cut or its calls dropped")
        healthy = failure is None and not retrying and not self.follow_ups_may_be_off and not self.unverified
        bound = "session_not_bound" not in last.fields
        if (
            extends
            and healthy
            and bound
            and caller not in self.expired
            and _continues(last, messages[len(held) :])
        ):
            return (
                "must",
                "a plain turn or the calls' results after a bound, whole answer, healthy upstream",
            )
        return None

    def check(
        self,
        caller: str,
        label: str,
        records: Sequence[RequestRecord],
        expect: Expect,
        failure: tuple[str, int] | None,
        done: Exchange | None,
    ) -> None:
        created = {r.session_id for r in records if r.method == "POST" and r.path == "/api/sessions"}
        created.discard(None)
        # a turn posted to a session this request created is a pinned start, not a follow-up
        follow_ups = [
            r
            for r in records
            if r.method == "POST" and r.path.endswith("/messages") and _session_of(r) not in created
        ]
        # what acts on a session (a create, a turn, /model): a status poll the caller's previous
        # request sent as it finished may reach the fake in this request's window, under load
        acting = [r for r in records if r.method == "POST"]
        self.touched.setdefault(caller, set()).update(s for s in map(_session_of, acting) if s is not None)
        self._no_second_session_after_a_5xx_post(label, records)
        if expect is not None and self.reuse:
            self._as_expected(label, expect, follow_ups, created, done)
        if done is not None and done.answer is not None and self.reuse:
            self._binding_explained(label, done)
        if done is None:
            if self.reuse and failure is None:
                self.unverified = True  # the fail-safe (or a failure the comparison reports)
            return
        if " again" not in label:
            # the history goes on with the first answer, so the exchange to continue is the first one
            self.last[caller] = done
            self.expired.discard(caller)

    def _no_second_session_after_a_5xx_post(self, label: str, records: Sequence[RequestRecord]) -> None:
        failed = next(
            (
                i
                for i, r in enumerate(records)
                if r.method == "POST" and r.path.endswith("/messages") and (r.status or 0) >= 500
            ),
            None,
        )
        if failed is not None and any(r.path == "/api/sessions" for r in records[failed:]):
            self.trace.problems.append(
                f"{label}: a new session after a follow-up answered {records[failed].status} "
                "(conol may have accepted the turn)"
            )

    def _as_expected(
        self,
        label: str,
        expect: tuple[str, str],
        follow_ups: list[RequestRecord],
        created: set[Any],
        done: Exchange | None,
    ) -> None:
        kind, why = expect
        if kind == "must not" and follow_ups:
            self.trace.problems.append(f"{label}: continued a session, but {why}")
        continued = any(r.status == 202 for r in follow_ups) and not created
        if kind == "must" and not continued:
            reason = done.fields.get("session_reuse_reason") if done is not None else "no answer"
            self.trace.problems.append(f"{label}: did not continue its session ({why}): {reason}")

    def _binding_explained(self, label: str, done: Exchange) -> None:
        why = done.fields.get("session_not_bound")
        if why is None or _explained(why, done, self.reading, self.last):
            return
        self.trace.problems.append(f"{label}: not bound without a cause the test knows: {why}")

    def finish(self) -> None:
        sets = list(self.touched.values())
        for other in sets[1:]:
            if sets[0] & other:
                self.trace.problems.append(
                    f"two callers touched the same session(s): {sorted(sets[0] & other)}"
                )


def _continues(last: Exchange, new: list[dict[str, Any]]) -> bool:
    """A plain user message after a plain answer, or results of exactly the answer's calls (and a
    user message after them, or not)."""
    if not last.calls:
        return len(new) == 1 and new[0]["role"] == "user"
    results = [m for m in new if m["role"] == "tool"]
    rest = new[len(results) :]
    answered = {m["tool_call_id"] for m in results} == {c["id"] for c in last.calls}
    return (
        answered
        and new[: len(results)] == results
        and all(m["role"] == "user" for m in rest)
        and len(rest) <= 1
    )


def _explained(why: str, done: Exchange, reading: Reading, last: dict[str, Exchange | None]) -> bool:
    v = reading.values
    expose = v["builtin_tools"] == "expose"
    if why.startswith("the answer was cut"):
        return done.cut is not None and not done.calls
    if why.startswith("conol made tool calls the client did not get"):
        return not done.turn.parallel
    if why.startswith(("conol sent the answer without stages", "conol's stream never showed")):
        return v["stageless_turns"] == "all"
    if why.startswith("conol holds more than the client"):
        searched = any(
            e is not None and SEARCH_ASK.fullmatch(e.turn.user_text) is not None for e in last.values()
        )
        late = v["late_events"] == "answer" or (expose and v["late_events"] == "tool_call")
        return late or (expose and searched)
    return False


def _session_of(record: RequestRecord) -> str | None:
    """The session a request named in its path (even one the fake no longer knows), or created."""
    match = SESSION_PATH.match(record.path)
    return match.group(1) if match is not None else record.session_id
