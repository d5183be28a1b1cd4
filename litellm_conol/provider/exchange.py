"""One request from start to answer: its session, and the repair turns that validation asks for.

All four entry points go through :class:`Exchange`. Usually it is one session. With a
``response_format``, or client tools whose call arguments are validated (``tool_validation``), an
answer that fails validation gets a repair turn: a new session with the conversation, the bad
answer and what is wrong with it, up to ``max_repair_turns`` times; then
``InvalidStructuredOutput``. Never is an invalid answer returned as a success.

Streaming: with a ``response_format`` the whole answer is held until it validates, then sent (a
client never sees JSON that is later rejected). Without one, the first turn's text streams live as
ever and only client tool calls wait for the end of the turn (which comes right after them) to be
validated; a repair turn's tool calls (or text) follow once valid.

A request that exhausted its repair turns is remembered (``FailureGuard.validation``): an identical
one gets one more round, then is refused without a session
(docs/effort-and-retries.md#the-memory-of-recent-failures).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from litellm.types.utils import Delta, ModelResponseStream, Usage

from ..client.assets import ImageTally, asset_cache, upload_images
from ..client.driver import SessionRun
from ..client.follow_up import FollowUpRefused
from ..client.pool import shared_client
from ..core.answer.assembler import Assembler, ReasoningDelta
from ..core.answer.structured import (
    CallToCheck,
    Valid,
    answer_repair,
    check_answer,
    check_tool_calls,
    tool_call_repair,
)
from ..core.config.options import ConolRequest
from ..core.errors import AgentFailed, ConolError, InvalidStructuredOutput
from ..core.protocol.wire import CreateSessionBody
from ..core.request.images import AssetRef, resolve_images
from ..reuse.accounts import AccountGuard
from ..reuse.failure_guard import FailureGuard
from ..reuse.session_reuse import Reuse
from .chunks import ChunkMaker
from .prompt_tokens import PromptEstimate, estimate_prompt
from .result_fields import result_fields
from .session_stream import answer_cutter, session_chunks, session_run
from .usage import RequestUsage, is_reported, request_usage

# what a create that names a gone asset may answer
STALE_ASSET = frozenset({400, 404, 410, 422})


@dataclass(frozen=True)
class _Rejection:
    error: str
    repair: list[dict[str, Any]]  # the messages a repair turn appends
    tool_call: bool


@dataclass
class Exchange:
    """Iterate :meth:`chunks`; afterwards ``last`` is the accepted turn and ``usage()`` covers all."""

    request: ConolRequest
    messages: list[Any]
    runs: list[SessionRun] = field(default_factory=list, init=False)
    prompts: list[list[Any]] = field(default_factory=list, init=False)
    _estimates: dict[int, PromptEstimate] = field(default_factory=dict, init=False)  # by run
    content: str | None = field(default=None, init=False)  # the validated JSON (canonical text)
    assets: dict[str, AssetRef] = field(default_factory=dict, init=False)  # uploaded images by key
    _remembered: bool = field(default=False, init=False)  # some came from an earlier request's upload
    images: ImageTally = field(default_factory=ImageTally, init=False)  # uploads and URL fetches made
    fallbacks: list[str] = field(default_factory=list, init=False)  # why a follow-up gave way to a session
    replaced: list[SessionRun] = field(default_factory=list, init=False)  # runs a fallback replaced
    _usage: RequestUsage | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.reuse = Reuse(self.request, self.messages)
        self.account = AccountGuard.of(self.request)

    @property
    def last(self) -> SessionRun:
        return self.runs[-1]

    @property
    def holds_answer(self) -> bool:
        return self.request.output_format is not None

    async def chunks(self, maker: ChunkMaker | None = None) -> AsyncIterator[ModelResponseStream]:
        """Run the turns; yield chunks when a ``maker`` is given (streaming). A request known not to
        validate is refused before anything is uploaded or created."""
        validation = FailureGuard.of(self.request, self.request.body).validation(self.request)
        await validation.check()
        try:
            conversation = list(self.messages)
            self.assets = await self._uploaded_images()
            for turn in range(self.request.max_repair_turns + 1):
                body = self.request.body if turn == 0 else self.request.body_for(conversation)
                live = maker if turn == 0 and not self.holds_answer else None
                async for chunk in self._guarded_turn(body, conversation, live, first=turn == 0):
                    yield chunk
                rejection = self._judge(self.last.assembler)
                if rejection is None:
                    break
                if turn == self.request.max_repair_turns or (
                    rejection.tool_call and self.request.tool_validation == "error"
                ):
                    raise await validation.failed(self._failure(rejection))
                conversation = conversation + rejection.repair
            await validation.succeeded()
        finally:
            await validation.release()  # an identical request waiting for this one goes on
        if maker is not None:
            for chunk in self._held_chunks(maker):
                yield chunk
        streamed = maker.content_sent if maker is not None else None
        await self.reuse.bind(self.runs, finished=True, text=streamed)

    async def _guarded_turn(
        self, body: CreateSessionBody, conversation: list[Any], live: ChunkMaker | None, *, first: bool
    ) -> AsyncIterator[ModelResponseStream]:
        """One turn under the failure memory: a failure this request is known to repeat costs no
        session, and a repeated one becomes the error clients do not retry (``reuse/known_failures.py``)."""
        guard = FailureGuard.of(self.request, body, self.account)
        await guard.check()
        try:
            async for chunk in self._turn(body, conversation, live, first=first):
                yield chunk
            await guard.succeeded()
        except AgentFailed as failure:
            classified = await guard.failed(failure)
            if classified is failure:
                raise
            raise classified from failure
        finally:
            await guard.release()  # an identical request waiting for this one goes on

    async def _turn(
        self, body: CreateSessionBody, conversation: list[Any], live: ChunkMaker | None, *, first: bool
    ) -> AsyncIterator[ModelResponseStream]:
        """One session (the first turn may continue a bound one: ``Reuse``). An image remembered
        from an earlier request may be gone from conol (expired, deleted): when the create is
        refused and the turn names remembered assets, they are forgotten and uploaded afresh, and
        one new session is created (none was made)."""
        for attempt in (0, 1):
            start = None
            if first:  # a second attempt (images uploaded again) starts afresh, pinned as a first turn would
                start = (
                    self.reuse.fresh_start(self.assets) if attempt else await self.reuse.start(self.assets)
                )
            cutter = await answer_cutter(self.request)
            run = session_run(self.request, resolve_images(body, self.assets), cutter, start)
            self.runs.append(run)
            self.prompts.append(conversation)
            try:
                async for chunk in self._drive(run, live):
                    yield chunk
                return
            except ConolError as exc:
                if attempt or not self._remembered or self.last.info is not None:
                    raise
                if exc.status_code not in STALE_ASSET:
                    raise
            self.runs.pop()
            self.prompts.pop()
            asset_cache.forget(self.request.endpoint, self.assets.values(), caller=self.request.caller)
            self._remembered = False
            self.assets = await self._uploaded_images()

    async def _uploaded_images(self) -> dict[str, AssetRef]:
        """The request's images as conol assets (before the session: the turn names them)."""
        request = self.request
        if not request.images:
            return {}
        endpoint, caller = request.endpoint, request.caller
        self._remembered = any(asset_cache.get(endpoint, key, caller=caller) for key in request.images)
        return await upload_images(
            endpoint, shared_client(), request.images, request.image_limits, caller=caller, tally=self.images
        )

    async def _drive(self, run: SessionRun, live: ChunkMaker | None) -> AsyncIterator[ModelResponseStream]:
        """One run; a follow-up conol refuses before any answer is retried as one new full session
        (nothing was streamed: the first chunk waits for content, and a refusal comes before any)."""
        try:
            async for chunk in session_chunks(self.request, run, live, hold_calls=self._validates_calls):
                yield chunk
        except ConolError as exc:
            if not self.reuse.fallback(run, exc):
                await self.reuse.failed(run, exc)
                raise
            self._fell_back(run, exc)
        except BaseException as exc:  # cancelled, or the caller stopped reading: it may retry
            self.reuse.failed_soon(run, exc)
            raise
        else:
            return
        retry = session_run(self.request, run.body, await answer_cutter(self.request), self.reuse.retry_start)
        self.runs[-1] = retry
        async for chunk in session_chunks(self.request, retry, live, hold_calls=self._validates_calls):
            yield chunk

    def _fell_back(self, run: SessionRun, exc: ConolError) -> None:
        self.fallbacks.append(exc.kind if isinstance(exc, FollowUpRefused) else "gone")
        if run.info is not None:
            self.replaced.append(run)  # its turn was posted: it counts as a follow-up

    def fields(self) -> dict[str, Any]:
        """``provider_specific_fields``: the accepted turn's, plus the turns when validation ran."""
        last = self.last
        fields = (
            result_fields(
                last.info,
                last.assembler,
                last.stats,
                requested=self.request.body.agent_model,
                usage_reported=self._usage_reported,
            )
            | self.reuse.fields()
        )
        attachments = sum(e.estimated_attachments for e in map(self._estimate, range(len(self.runs))) if e)
        if attachments:
            fields["usage_estimated_attachments"] = attachments
        if self.holds_answer or len(self.runs) > 1 or (self._validates_calls and last.assembler.tool_calls):
            fields["turns"] = len(self.runs)
            fields["session_ids"] = [run.info.session_id for run in self.runs if run.info is not None]
        return fields

    def usage(self) -> Usage:
        """Over every turn: ``provider/usage.py``'s ``request_usage``, computed once after the last
        turn (the response and the usage fields both read it)."""
        return self.usage_split().usage

    def usage_split(self) -> RequestUsage:
        if self._usage is None:
            estimates = [self._estimate(index) for index in range(len(self.runs))]
            self._usage = request_usage(zip(estimates, (run.assembler for run in self.runs), strict=True))
        return self._usage

    @property
    def _usage_reported(self) -> bool:
        """Every turn's usage is conol's own (one estimated turn makes the sum an estimate)."""
        return all(is_reported(run.assembler) for run in self.runs)

    def _estimate(self, index: int) -> PromptEstimate | None:
        """The prompt estimate of run ``index``, once (``None``: conol reported the turn's usage)."""
        if is_reported(self.runs[index].assembler):
            return None
        if index not in self._estimates:
            self._estimates[index] = estimate_prompt(self.prompts[index])
        return self._estimates[index]

    # -- validation --

    @property
    def _validates_calls(self) -> bool:
        return bool(self.request.tool_schemas)

    def _judge(self, assembler: Assembler) -> _Rejection | None:
        if assembler.tool_calls:
            if not self._validates_calls:
                return None
            calls = [CallToCheck(c.id, c.name, c.arguments) for c in assembler.tool_calls]
            error = check_tool_calls(self.request.tool_schemas, calls)
            if error is None:
                return None
            return _Rejection(error, tool_call_repair(assembler.final_text, calls, error), tool_call=True)
        if self.request.output_format is None:
            return None
        verdict = check_answer(self.request.output_format, assembler.final_text)
        if isinstance(verdict, Valid):
            self.content = verdict.json_text
            return None
        return _Rejection(verdict.error, answer_repair(assembler.final_text, verdict.error), tool_call=False)

    def _failure(self, rejection: _Rejection) -> InvalidStructuredOutput:
        turns = len(self.runs)
        what = "a tool call's arguments" if rejection.tool_call else "the answer"
        sessions = ", ".join(run.info.session_id for run in self.runs if run.info is not None)
        if rejection.tool_call and self.request.tool_validation == "error":
            how = "tool_validation is 'error'"
        else:
            how = f"{turns} turn(s), max_repair_turns={self.request.max_repair_turns}"
        message = f"{what} failed validation ({how}; sessions {sessions}): {rejection.error}"
        token = self.request.endpoint.token
        return InvalidStructuredOutput(message.replace(token, "***") if token else message)

    # -- streaming what was held --

    def _held_chunks(self, maker: ChunkMaker) -> list[ModelResponseStream]:
        last = self.last
        assembler = last.assembler
        chunks: list[ModelResponseStream] = []
        if self.holds_answer and last.info is not None:
            chunks.append(maker.opening(last.info))
            if assembler.final_reasoning:
                chunks.append(maker.for_piece(ReasoningDelta(assembler.final_reasoning)))
        if assembler.tool_calls:
            if self._validates_calls or self.holds_answer:
                chunks += maker.for_pieces(assembler.tool_calls)
        elif self.content is not None:
            chunks.append(maker.chunk(Delta(content=self.content)))
        elif len(self.runs) > 1 and assembler.final_text:
            # a repair turn that answered in text: nothing of it was streamed yet
            chunks.append(maker.chunk(Delta(content=assembler.final_text)))
        return chunks
