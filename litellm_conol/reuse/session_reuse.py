"""Session reuse and model pinning for one request: the glue between the pure decisions (``core``)
and the stores and follow-up calls (``client``).

:meth:`Reuse.start` says how the request's first run starts: a follow-up on the session that holds
its history, an empty create pinned with ``/model``, or one plain create. :meth:`Reuse.fallback`
turns a refused follow-up into a new full session; :meth:`Reuse.failed` keeps a session a failed
follow-up may have reached for that turn's retry; :meth:`Reuse.bind` records the session for the
next turn when its history is exactly what the client now holds (docs/session-reuse.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..client.assets import asset_cache
from ..client.driver import SessionRun
from ..client.follow_up import (
    FollowUpRefused,
    FollowUpStart,
    FollowUpUnverified,
    PinnedStart,
    SessionStart,
)
from ..core.config.options import ConolRequest
from ..core.errors import AgentFailed, ConolError, RequestTimeout
from ..core.protocol.follow_up import TurnBody
from ..core.protocol.session_info import SessionInfo
from ..core.protocol.turn_boundary import TurnBoundary
from ..core.request.images import AssetRef, resolve_images, resolve_parts
from .fingerprint import (
    Binding,
    DigestOfHistory,
    answered_refs,
    call_refs,
    canonical_digest,
    canonical_history,
    returned_assistant,
    scope_digest,
    settings_digest,
    split_new_turn,
)
from .store import binding_store, upstream_memory
from .turns import (
    Ask,
    Continue,
    Fresh,
    plan_turn,
    render_turn,
    tail_held_back,
    why_not_bound,
)

log = logging.getLogger("litellm_conol.reuse")

GONE_STREAM = frozenset({404, 410})  # a follow-up's stream answering these: the session is gone
LARGE_HISTORY = 1 << 20  # characters of content above which the fingerprint is computed off the loop
# how deep a message's image data lies: message → content → part → image_url / source → url / data
IMAGE_DEPTH = 5


@dataclass
class Reuse:
    request: ConolRequest
    messages: list[Any]
    reused: bool = field(default=False, init=False)
    reason: str = field(default="", init=False)
    not_bound: str = field(default="", init=False)  # why the session was not kept for the next turn
    _binding: Binding | None = field(default=None, init=False)
    _start: SessionStart | None = field(default=None, init=False)
    # the digest of the request's canonical history so far: no copy of the conversation is kept
    _history: DigestOfHistory | None = field(default=None, init=False)
    _history_key: str = field(default="", init=False)
    _turn_key: str = field(default="", init=False)
    _answered: frozenset[str] = field(default=frozenset(), init=False)
    _assets: Mapping[str, AssetRef] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        endpoint, body = self.request.endpoint, self.request.body
        self.scope = scope_digest(endpoint.base_url, endpoint.token, self.request.caller)
        # what conol does (follow-ups, pinning) is the upstream's, whoever asks
        self.upstream = scope_digest(endpoint.base_url, endpoint.token)
        tools = [tool.model_dump() for tool in body.tools or ()]
        self.settings = settings_digest(tools, {"timezone": body.timezone})

    @property
    def _options_on(self) -> bool:
        return self.request.reuse.mode == "auto"

    async def start(self, assets: Mapping[str, AssetRef]) -> SessionStart | None:
        """How the first run starts (``None``: one create); ``assets``: the request's uploaded
        images, which the turn names."""
        request, body = self.request, self.request.body
        self._assets = assets
        split = split_new_turn(self.messages)
        continuable = split is not None and request.output_format is None
        await upstream_memory.refresh(self.upstream, body.agent_model, request.reuse.redis_url)
        refused = upstream_memory.refused(self.upstream)
        unverified = upstream_memory.unverified(self.upstream)
        binding = None
        ask = Ask(body.agent_model, body.agent_effort)
        store = binding_store(request.reuse)
        if self._options_on and continuable and not (refused or unverified) and split is not None:
            await self._fingerprint(split[1])
            ask = replace(ask, turn=self._turn_key, answered=self._answered)
            binding = await store.peek(self._history_key)  # taken below only to continue it
        decision = plan_turn(
            binding,
            ask,
            options=request.reuse,
            continuable=continuable,
            upstream_refused=refused,
            unverified=unverified,
            pinning=self._pins(),
        )
        taken = isinstance(decision, Continue) and await store.take(self._history_key, decision.binding)
        if isinstance(decision, Continue) and not taken:
            decision = Fresh("another request took this session")
        if isinstance(decision, Continue) and split is not None:
            self._start = self._follow_up(decision, split, assets)
            return self._start
        self.reason = decision.reason if isinstance(decision, Fresh) else "no new turn"
        self._start = self._pinned_start(assets)
        return self._start

    def _follow_up(
        self, decision: Continue, split: tuple[list[Any], list[Any]], assets: Mapping[str, AssetRef]
    ) -> FollowUpStart:
        body, binding = self.request.body, decision.binding
        parts = render_turn(*split, self.request.image_limits)
        self.reused, self._binding = True, binding
        self.reason = "history matched" + (", model re-pinned" if decision.repin else "")
        if decision.reattach:
            self.reason = "history matched, reading the turn an earlier attempt posted"
        info = SessionInfo(binding.session_id, binding.effective_model or binding.model, binding.downgraded)
        return FollowUpStart(
            session_id=binding.session_id,
            turn=TurnBody(messages=resolve_parts(parts, assets), timezone=body.timezone),
            boundary=TurnBoundary(binding.history, reattach=decision.reattach),
            model=body.agent_model,
            effort=body.agent_effort,
            info=info,
            repin=decision.repin,
            reattach=decision.reattach,
            waiting=bool(binding.pending_calls),
        )

    async def _fingerprint(self, new: Sequence[Any]) -> None:
        """The history's and the new turn's keys, from one canonical form of the request (computed
        once per request; off the event loop when the request carries large content, images say)."""
        canonical = await self._canonical_form()
        cut = len(canonical) - len(new)  # a new turn is user and tool messages: one entry each
        self._history = DigestOfHistory(self.scope, self.settings, canonical[:cut])
        self._history_key = self._history.followed_by([])
        self._turn_key = canonical_digest(self.scope, self.settings, ["turn", *canonical[cut:]])
        self._answered = answered_refs(canonical[cut:])
        self._history.feed(canonical[cut:])

    async def _canonical_form(self) -> list[list[Any]]:
        if _content_size(self.messages) > LARGE_HISTORY:
            return await asyncio.to_thread(canonical_history, self.messages)
        return canonical_history(self.messages)

    def _pins(self) -> bool:
        """Whether this request's model is pinned with ``/model`` on this upstream."""
        mode = self.request.reuse.pinning
        if mode == "pin":
            return True
        if mode == "auto":
            return upstream_memory.create_honours(self.upstream, self.request.body.agent_model) is not True
        return False

    def _pinned_start(self, assets: Mapping[str, AssetRef]) -> SessionStart | None:
        if not self._pins() or upstream_memory.refused(self.upstream):
            return None  # pinning posts the turn: an upstream without follow-ups cannot pin
        body = resolve_images(self.request.body, assets)
        return PinnedStart(
            create=body,
            turn=TurnBody(messages=body.messages, timezone=body.timezone),
            boundary=TurnBoundary(),
            always_pin=self.request.reuse.pinning == "pin",
            strict_model=self.request.strict_model,
        )

    @property
    def retry_start(self) -> SessionStart | None:
        """How the run :meth:`fallback` agreed to retry starts (``None``: one plain create)."""
        return self._start

    def fresh_start(self, assets: Mapping[str, AssetRef]) -> SessionStart | None:
        """How a new session for this request starts once the first attempt is given up (its images
        uploaded again, say): as a first turn would (``None``: one plain create)."""
        self._assets = assets
        self.reused, self._binding = False, None
        self._start = self._pinned_start(assets)
        return self._start

    def fallback(self, run: SessionRun, exc: ConolError) -> bool:
        """Whether a failed first run is retried (as one plain create, or, when the turn an earlier
        attempt posted was never taken, by posting it on the same session): conol refused the follow-up
        (or the pinned start's turn), or the follow-up's stream says the session is gone, before
        anything of the answer arrived. Only an upstream without follow-ups turns them off for it; a
        gone image asset is this conversation's (its images are uploaded again)."""
        if self._start is None or run.start is not self._start:
            return False
        answer = run.assembler
        if answer.final_text or answer.final_reasoning or answer.tool_calls:
            return False
        if isinstance(exc, FollowUpRefused):
            kind = exc.kind
        elif isinstance(self._start, FollowUpStart) and int(exc.status_code) in GONE_STREAM:
            kind = "gone"
        else:
            return False
        if kind == "not_taken" and isinstance(self._start, FollowUpStart):
            # the turn an earlier attempt posted never arrived: post it now, on the same session
            self._start = replace(
                self._start, reattach=False, boundary=TurnBoundary(self._start.boundary.known)
            )
            self.reason = "history matched, the turn an earlier attempt posted was not taken: posted again"
            return True
        if kind == "asset_gone":  # this conversation's image: uploaded again for the new session
            asset_cache.forget(self.request.endpoint, self._assets.values(), caller=self.request.caller)
        if kind == "unsupported":
            upstream_memory.refuse(self.upstream, self.request.reuse.backoff)
            log.warning(
                "session reuse: conol has no follow-ups here (HTTP %s); they stay off for this "
                "upstream for %.0f s",
                exc.status_code,
                self.request.reuse.backoff,
            )
        self.reused, self.reason = False, f"follow-up refused ({kind}, HTTP {exc.status_code}): new session"
        # the new session starts as a first turn would: pinned where this model is pinned
        self._start = self._pinned_start(self._assets) if isinstance(self._start, FollowUpStart) else None
        return True

    async def failed(self, run: SessionRun, exc: BaseException) -> None:
        """A follow-up failed with the caller's usual error: keep its session for the retry. Not
        taken → the binding as it was; maybe taken → only this very turn may continue it, and reads
        it instead of posting it again. Forgotten when the session now holds a turn the client does
        not: the agent failed, a reattach found nothing, the turn was read to its end and refused by
        us (``tool_choice: required`` unmet, a downgrade it revealed), or its stream could not be
        read safely (follow-ups on this upstream are then off a while, docs/session-reuse.md#fail-safe)."""
        start, binding = run.start, self._binding
        if not isinstance(start, FollowUpStart) or start is not self._start or binding is None:
            return
        self._binding = None
        if isinstance(exc, FollowUpUnverified):
            self._distrust(exc)
            return
        if isinstance(exc, AgentFailed) or (start.reattach and isinstance(exc, RequestTimeout)):
            return
        if start.posted != "no" and (run.stats.ended_by or not _may_be_running(exc)):
            return  # conol holds the whole turn (or a turn we refused): not the client's history
        if start.posted != "no":
            binding = replace(binding, pending_turn=self._turn_key)
        await self._put(binding)

    def _distrust(self, exc: FollowUpUnverified) -> None:
        backoff = self.request.reuse.backoff
        upstream_memory.distrust(self.upstream, exc.message, backoff)
        log.warning(
            "session reuse: a follow-up's stream could not be read safely (%s); follow-ups stay off "
            "for this upstream for %.0f s",
            exc.message,
            backoff,
        )

    def failed_soon(self, run: SessionRun, exc: BaseException) -> None:
        """:meth:`failed` for a request being cancelled (the caller went away): done in the
        background, since a cancelled task should not wait."""
        try:
            task = asyncio.get_running_loop().create_task(self.failed(run, exc))
        except RuntimeError:
            return
        _background.add(task)
        task.add_done_callback(_background.discard)

    async def bind(self, runs: list[SessionRun], finished: bool, text: str | None = None) -> None:
        """Remember the session for the next turn, when conol's history is what the client now holds.
        ``text``: the answer's text as streamed to the client (``None``: not streamed)."""
        if not runs:
            return
        run = runs[-1]
        self._learn(run)
        await upstream_memory.flush()  # what this request learnt reaches the other workers before it ends
        if not self._options_on or run.info is None:
            return
        answer, boundary = run.assembler, run.boundary
        refusal = why_not_bound(
            runs=len(runs),
            cut=answer.cut is not None,
            structured=self.request.output_format is not None,
            finished=finished,
            withheld_calls=bool(answer.dropped_calls or answer.withheld_calls),
            unnamed_stages=boundary.unnamed,
            stageless=boundary.stageless,
            echoed=boundary.echoed,
            rewritten=text is not None and text != answer.final_text,
            tail=tail_held_back(boundary.tail_logs, answer.client_tools, answer.expose_builtins),
        )
        if refusal is not None:
            self.not_bound = refusal
            return
        calls = [(call.id, call.name, call.arguments) for call in answer.tool_calls]
        if text is None:  # an answer with tool calls has null content: its text is not the client's
            text = "" if calls else answer.final_text
        answer_message = returned_assistant(text, calls)
        key = await self._key_after(answer_message)
        earlier = self._binding if self.reused else None
        binding = Binding(
            session_id=run.info.session_id,
            model=self.request.body.agent_model,
            effort=self.request.body.agent_effort,
            history=boundary.history(),
            turns=earlier.turns + 1 if earlier is not None else 1,
            pinned=bool(getattr(run.start, "pinned", False)) or (earlier is not None and earlier.pinned),
            effective_model=run.info.effective_model or "",
            downgraded=run.info.model_downgraded,
            pending_calls=call_refs(answer_message),
        )
        self._binding = None
        await binding_store(self.request.reuse).put(key, binding, self.request.reuse.ttl)

    async def _key_after(self, answer: dict[str, Any]) -> str:
        """The binding key of the conversation once ``answer`` is added."""
        if self._ends_with_answer():  # merged with the last assistant message
            return canonical_digest(self.scope, self.settings, canonical_history([*self.messages, answer]))
        if self._history is None:
            self._history = DigestOfHistory(self.scope, self.settings, await self._canonical_form())
        return self._history.followed_by(canonical_history([answer]))

    def _ends_with_answer(self) -> bool:
        last = self.messages[-1] if self.messages else None
        return isinstance(last, Mapping) and last.get("role") == "assistant"

    async def _put(self, binding: Binding) -> None:
        if self._history_key:
            await binding_store(self.request.reuse).put(self._history_key, binding, self.request.reuse.ttl)

    def _learn(self, run: SessionRun) -> None:
        start = run.start
        if isinstance(start, PinnedStart) and start.create_honoured is not None:
            upstream_memory.learn(self.upstream, self.request.body.agent_model, start.create_honoured)

    def fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"session_reused": self.reused, "session_reuse_reason": self.reason}
        if self.not_bound:
            fields["session_not_bound"] = self.not_bound
        return fields


_background: set[asyncio.Task[None]] = set()


def _may_be_running(exc: BaseException) -> bool:
    """Whether after this failure conol may still be writing the turn (its fate unknown): a
    transport failure, a timeout, a 5xx or a rate limit. Our own refusals (a 4xx we raise after
    reading the answer) are not."""
    if not isinstance(exc, ConolError):
        return True  # cancelled, or the caller stopped reading
    status = int(exc.status_code)
    return status >= 500 or status in (408, 429)


def _content_size(messages: Sequence[Any]) -> int:
    """Roughly how many characters the messages carry (images as their data URLs): cheap to count,
    costly to hash."""
    return sum(_size(message, IMAGE_DEPTH) for message in messages)


def _size(value: Any, depth: int) -> int:
    if isinstance(value, str):
        return len(value)
    if depth <= 0:
        return 0
    if isinstance(value, Mapping):
        return sum(_size(item, depth - 1) for item in value.values())
    if isinstance(value, list):
        return sum(_size(item, depth - 1) for item in value)
    return 0
