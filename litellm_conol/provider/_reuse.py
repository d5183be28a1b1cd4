"""Session reuse and model pinning for one request: the glue between the pure decisions (``core``)
and the stores and follow-up calls (``client``).

:meth:`Reuse.start` says how the request's first run starts: a follow-up on the session that holds
its history, an empty create pinned with ``/model``, or today's one create. :meth:`Reuse.fallback`
turns a refused follow-up into a new full session (and keeps reuse off for that upstream a while);
:meth:`Reuse.bind` records the session for the next turn when its history is exactly what the client
now holds.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..client import (
    FollowUpRefused,
    FollowUpStart,
    PinnedStart,
    SessionRun,
    SessionStart,
    binding_store,
    upstream_memory,
)
from ..core import (
    AssetRef,
    Binding,
    ConolError,
    ConolRequest,
    Continue,
    Fresh,
    TurnBody,
    TurnBoundary,
    bind_refusal,
    decide,
    history_digest,
    last_text,
    render_turn,
    resolve_images,
    resolve_parts,
    returned_assistant,
    scope_digest,
    settings_digest,
    split_new_turn,
)

log = logging.getLogger("litellm_conol.reuse")

# A follow-up answered with one of these (or refused outright) is retried as a new full session.
FALLBACK_STATUSES = frozenset({404, 405, 409, 410, 422})


@dataclass
class Reuse:
    request: ConolRequest
    messages: list[Any]
    reused: bool = field(default=False, init=False)
    reason: str = field(default="", init=False)
    _binding: Binding | None = field(default=None, init=False)
    _start: SessionStart | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        endpoint, body = self.request.endpoint, self.request.body
        self.scope = scope_digest(endpoint.base_url, endpoint.token)
        tools = [tool.model_dump() for tool in body.tools or ()]
        self.settings = settings_digest(tools, {"timezone": body.timezone})

    @property
    def _options_on(self) -> bool:
        return self.request.reuse.mode == "auto"

    async def start(self, assets: Mapping[str, AssetRef]) -> SessionStart | None:
        """How the first run starts (``None``: one create, as always); ``assets``: the request's
        uploaded images, which the turn names."""
        request, body = self.request, self.request.body
        split = split_new_turn(self.messages)
        continuable = split is not None and request.output_format is None
        binding = None
        await upstream_memory.refresh(self.scope, body.agent_model, request.reuse.redis_url)
        refused = upstream_memory.refused(self.scope)
        store, key = binding_store(request.reuse), ""
        if self._options_on and continuable and not refused and split is not None:
            key = history_digest(self.scope, self.settings, split[0])
            binding = await store.peek(key)  # consumed below only to continue it
        decision = decide(
            binding,
            options=request.reuse,
            model=body.agent_model,
            effort=body.agent_effort,
            continuable=continuable,
            upstream_refused=refused,
            pinning=self._pins(),
        )
        if isinstance(decision, Continue) and await store.take(key, decision.binding) is None:
            decision = Fresh("another request took this session")
        if isinstance(decision, Continue) and split is not None:
            parts = render_turn(*split, request.image_limits)
            turn = TurnBody(messages=resolve_parts(parts, assets), timezone=body.timezone)
            self.reused, self._binding = True, decision.binding
            self.reason = "history matched" + (", model re-pinned" if decision.repin else "")
            self._start = FollowUpStart(
                session_id=decision.binding.session_id,
                turn=turn,
                boundary=TurnBoundary(frozenset(decision.binding.stages), last_text(turn.messages)),
                model=body.agent_model,
                effort=body.agent_effort,
                repin=decision.repin,
            )
            return self._start
        self.reason = decision.reason if not isinstance(decision, Continue) else "no new turn"
        self._start = self._pinned_start(assets)
        return self._start

    def _pins(self) -> bool:
        """Whether this request's model is pinned with ``/model`` on this upstream."""
        mode = self.request.reuse.pinning
        if mode == "pin":
            return True
        if mode == "auto":
            return upstream_memory.create_honours(self.scope, self.request.body.agent_model) is not True
        return False

    def _pinned_start(self, assets: Mapping[str, AssetRef]) -> SessionStart | None:
        if not self._pins() or upstream_memory.refused(self.scope):
            return None
        body = resolve_images(self.request.body, assets)
        return PinnedStart(
            create=body,
            turn=TurnBody(messages=body.messages, timezone=body.timezone),
            boundary=TurnBoundary(frozenset(), last_text(body.messages)),
            always_pin=self.request.reuse.pinning == "pin",
            strict_model=self.request.strict_model,
        )

    def fallback(self, run: SessionRun, exc: ConolError) -> bool:
        """Whether a failed first run is retried as one plain create: a follow-up conol refused, or
        a stream that says the session is gone, before anything of the answer arrived."""
        if self._start is None or run.start is not self._start:
            return False
        answer = run.assembler
        if answer.final_text or answer.final_reasoning or answer.tool_calls:
            return False
        if not isinstance(exc, FollowUpRefused) and int(exc.status_code) not in FALLBACK_STATUSES:
            return False
        upstream_memory.refuse(self.scope, self.request.reuse.backoff)
        log.warning(
            "session reuse: conol refused a turn on an existing session (HTTP %s); a new session "
            "answers instead, and follow-ups stay off for this upstream for %.0f s",
            exc.status_code,
            self.request.reuse.backoff,
        )
        self.reused, self.reason = False, f"follow-up refused (HTTP {exc.status_code}): new session"
        self._start = None
        return True

    async def bind(self, runs: list[SessionRun], finished: bool) -> None:
        """Remember the session for the next turn, when conol's history is what the client now holds."""
        if not runs:
            return
        run = runs[-1]
        self._learn(run)
        await upstream_memory.flush()  # what this request learnt reaches the other workers before it ends
        if not self._options_on or run.info is None:
            return
        answer = run.assembler
        refusal = bind_refusal(
            runs=len(runs),
            cut=answer.cut is not None,
            structured=self.request.output_format is not None,
            finished=finished,
        )
        if refusal is not None:
            self.reason = self.reason or refusal
            return
        calls = [(call.id, call.name, call.arguments) for call in answer.tool_calls]
        history = [*self.messages, returned_assistant(answer.final_text, calls)]
        earlier = self._binding.stages if self._binding is not None and self.reused else ()
        binding = Binding(
            session_id=run.info.session_id,
            model=self.request.body.agent_model,
            effort=self.request.body.agent_effort,
            stages=tuple(dict.fromkeys([*earlier, *run.stages])),
            turns=(self._binding.turns + 1) if self._binding is not None and self.reused else 1,
            pinned=bool(getattr(run.start, "pinned", False))
            or (self.reused and self._binding is not None and self._binding.pinned),
        )
        store = binding_store(self.request.reuse)
        await store.put(history_digest(self.scope, self.settings, history), binding, self.request.reuse.ttl)

    def _learn(self, run: SessionRun) -> None:
        start = run.start
        if isinstance(start, PinnedStart) and start.create_honoured is not None:
            upstream_memory.learn(self.scope, self.request.body.agent_model, start.create_honoured)

    def fields(self) -> dict[str, Any]:
        return {"session_reused": self.reused, "session_reuse_reason": self.reason}
