"""Running the fake: ``FakeConol`` (a background thread or the caller's event loop) and
``run_forever`` (the command line's server; its flags are in ``_cli``)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, TypeVar

from aiohttp import web

from ._account import FakeAccount
from ._assets import StoredAsset
from ._catalog import KNOWN_MODELS
from ._records import FakeConfig, RequestRecord, SessionRecord
from ._scenarios import Scenario
from ._server import COOKIE_NAME, FakeState

DEFAULT_TOKEN = "fake-conol-token"
T = TypeVar("T")


class FakeConol:
    """A local conol.ai. ``with FakeConol() as fake:`` runs it in a background thread (works with
    sync and async clients); ``async with FakeConol() as fake:`` runs it on the current event loop
    (then only async clients may talk to it from that loop, or they would block it).
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str = DEFAULT_TOKEN,
        scenarios: Iterable[Scenario] = (),
        default_scenario: str = "hello",
        ping_interval: float = 1.0,
        known_models: Iterable[str] = KNOWN_MODELS,
        drift: str | None = None,
        readings: Mapping[str, Any] | None = None,
    ) -> None:
        """``readings``: ``FakeConfig`` switches of the readings other clients report (``framing``,
        ``context_usage``, ``context_model``, ``balance``, ``auth``, ``followup_stage``, …), kept
        over ``reset()``."""
        self.host = host
        self.port = port
        self._state = FakeState(
            token, scenarios, default_scenario, ping_interval, known_models, drift, readings
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    # ------------------------------------------------------------------------------------ addresses
    @property
    def token(self) -> str:
        """The session token the fake accepts: the ``api_key`` a client passes."""
        return self._state.token

    @property
    def base_url(self) -> str:
        """``http://host:port`` of the running fake: the ``api_base`` a client passes."""
        if self._runner is None:
            raise RuntimeError("the fake is not running")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def url(self, path: str) -> str:
        """``path`` (e.g. ``/_fake/requests``) on the running fake."""
        return self.base_url + path

    @property
    def cookies(self) -> dict[str, str]:
        """The auth cookie, as a client should send it."""
        return {COOKIE_NAME: self.token}

    # ---------------------------------------------------------------------------- async lifecycle
    async def astart(self) -> FakeConol:
        """Serve on the running event loop."""
        if self._runner is not None:
            raise RuntimeError("already running")
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        # handler_cancellation: a client disconnect cancels its stream handler at once, so the
        # connection record gets its close time when the client leaves, not at the next ping
        runner = web.AppRunner(
            self._state.build_app(), handler_cancellation=True, access_log=None, shutdown_timeout=2.0
        )
        await runner.setup()
        await web.SockSite(runner, sock, backlog=1024).start()
        self.port = sock.getsockname()[1]
        self._runner, self._loop = runner, asyncio.get_running_loop()
        self._state.stopping = False
        return self

    async def astop(self) -> None:
        """Stop serving (what ``async with`` does on exit): open streams end first."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._state.shutdown()  # ends every stream first, so cleanup does not wait for them
        await runner.cleanup()

    async def __aenter__(self) -> FakeConol:
        return await self.astart()

    async def __aexit__(self, *exc: object) -> None:
        await self.astop()

    # --------------------------------------------------------------------------- thread lifecycle
    def start(self, timeout: float = 10.0) -> FakeConol:
        """Serve from a daemon thread with its own event loop; returns once listening."""
        if self._thread is not None or self._runner is not None:
            raise RuntimeError("already running")
        loop = asyncio.new_event_loop()
        started = asyncio.run_coroutine_threadsafe(self.astart(), loop)  # runs once the loop does
        thread = threading.Thread(target=_run_loop, args=(loop,), name="fake-conol", daemon=True)
        thread.start()
        try:
            started.result(timeout)
        except BaseException:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            raise
        self._thread = thread
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and join the server thread (what ``with`` does on exit)."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            if self._runner is not None:
                raise RuntimeError("started with astart(): use `await fake.astop()`")
            return
        asyncio.run_coroutine_threadsafe(self.astop(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        self._thread = None

    def __enter__(self) -> FakeConol:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # ---------------------------------------------------------------------------------- scenarios
    @property
    def scenarios(self) -> dict[str, Scenario]:
        """The scenarios ``[[fake:NAME]]`` can pick, by name (built in and added)."""
        return dict(self._state.scenarios)

    def add_scenario(self, scenario: Scenario) -> None:
        """Register (or replace) a scenario until the next ``reset()``."""
        self._on_loop(lambda: self._state.scenarios.__setitem__(scenario.name, scenario))

    @property
    def default_scenario(self) -> str:
        """The scenario a request without a ``[[fake:NAME]]`` marker runs."""
        return self._state.default_scenario

    def set_default_scenario(self, name: str) -> None:
        """Run scenario ``name`` for requests without a marker, until the next ``reset()``."""
        self._on_loop(lambda: self._state.configure({"default_scenario": name}))

    # ----------------------------------------------------------------------------- faults, reset
    @property
    def config(self) -> FakeConfig:
        """The current fault injection and knobs (change them with ``configure``)."""
        return self._state.config

    def configure(self, **changes: Any) -> FakeConfig:
        """Change fault injection / knobs, e.g. ``configure(create_status=429)``; see ``FakeConfig``."""
        self._on_loop(lambda: self._state.configure(changes))
        return self._state.config

    def expire_assets(self) -> None:
        """Every uploaded asset is gone, as when conol expires them: a create or turn naming one
        answers ``config.unknown_asset_status``."""
        self._on_loop(self._state.expire_assets)

    def expire_sessions(self) -> None:
        """Every session so far is gone, as when conol drops them: a turn on one answers
        ``config.gone_status``, its stream and status 404."""
        self._on_loop(self._state.expire_sessions)

    def reset(self) -> None:
        """Drop records and sessions (their streams end), restore scenarios, default and config."""
        self._on_loop(self._state.reset)

    # ------------------------------------------------------------------------------------- accounts
    def add_account(self, name: str, token: str | None = None, **state: float) -> str:
        """Another conol account this fake serves, with a token of its own (default
        ``fake-conol-token-<name>``), returned; ``state``: its balance (``daily``, ``subscription``,
        ``extra``, ``daily_allotment``, ``subscription_amount``), ``turn_cost`` (credits per turn,
        default 0) and ``refill_in`` (seconds until its daily refill). Kept over ``reset()``, which
        puts it back to this state."""
        token = token or f"{DEFAULT_TOKEN}-{name}"
        self._on_loop(lambda: self._state.accounts.add(name, token, dict(state)))
        return token

    def set_account(self, name: str, **state: float) -> FakeAccount:
        """Change an account's balance, ``turn_cost`` or ``refill_in`` now (``"default"``: the
        fake's own token), until the next ``reset()``."""
        account = self._state.accounts.get(name)
        self._on_loop(lambda: account.update(dict(state), time.time()))
        return account

    def account(self, name: str = "default") -> FakeAccount:
        """An account: its credits, next refill and what the fake counted (``sessions``,
        ``followups``, ``uploads``, ``credit_errors``, ``balance_reads``)."""
        return self._state.accounts.get(name)

    @property
    def accounts(self) -> dict[str, FakeAccount]:
        """Every account by name, the default one (``"default"``) first."""
        return dict(self._state.accounts.by_name)

    # -------------------------------------------------------------------------------------- records
    @property
    def requests(self) -> list[RequestRecord]:
        """Every HTTP request the fake received since the last ``reset()``, oldest first."""
        return list(self._state.requests)

    @property
    def assets(self) -> dict[str, StoredAsset]:
        """The uploaded images (``POST /api/assets``) by id: media type, size, sha256."""
        return dict(self._state.assets.assets)

    @property
    def sessions(self) -> dict[str, SessionRecord]:
        """The sessions created since the last ``reset()``, by id, in creation order."""
        return {sid: live.record for sid, live in list(self._state.live.items())}

    def session(self, session_id: str) -> SessionRecord:
        """The session ``session_id`` (KeyError if there is none)."""
        return self._state.live[session_id].record

    @property
    def last_session(self) -> SessionRecord:
        """The session created last, with its ``expected`` answer (LookupError if none)."""
        sessions = list(self._state.live.values())
        if not sessions:
            raise LookupError("no session has been created")
        return sessions[-1].record

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0, interval: float = 0.01) -> bool:
        """Poll ``predicate`` (e.g. "the stream was closed") from a thread; False on timeout."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                return False
            time.sleep(interval)
        return True

    async def await_until(
        self, predicate: Callable[[], bool], timeout: float = 5.0, interval: float = 0.01
    ) -> bool:
        """Poll ``predicate`` from the event loop (``wait_until`` for async tests)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(interval)
        return True

    def _on_loop(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the server's loop: state is only ever touched from there."""
        loop = self._loop
        if loop is None or not loop.is_running() or _running_loop() is loop:
            return fn()

        async def call() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(call(), loop).result(10.0)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        tasks = asyncio.all_tasks(loop)
        for task in tasks:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def run_forever(host: str = "127.0.0.1", port: int = 0, **options: Any) -> None:
    """Serve until SIGINT/SIGTERM, after printing ``fake conol listening on URL (token: T)``."""
    asyncio.run(_serve_forever(FakeConol(host=host, port=port, **options)))


async def _serve_forever(fake: FakeConol) -> None:
    await fake.astart()
    print(f"fake conol listening on {fake.base_url} (token: {fake.token})", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows / not the main thread
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await fake.astop()
