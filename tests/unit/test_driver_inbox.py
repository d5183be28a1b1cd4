"""The driver's inbox: what the reader and poll tasks report, taken in order by the driver alone."""

from __future__ import annotations

import asyncio

import pytest
from support.timing import bound

from litellm_conol.client.inbox import Inbox, StatusReport, StreamEvent

pytestmark = pytest.mark.timeout(10)


async def test_items_come_out_in_order_without_waiting_when_queued():
    inbox = Inbox()
    inbox.put_nowait(StreamEvent(b"a"))
    inbox.put_nowait(StatusReport("running"))
    loop = asyncio.get_running_loop()
    assert await inbox.get(loop.time() - 1) == StreamEvent(b"a")  # a past deadline does not matter
    assert not inbox.empty()
    assert inbox.get_nowait() == StatusReport("running")
    assert inbox.empty()


async def test_get_returns_none_at_the_deadline():
    inbox = Inbox()
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await inbox.get(started + 0.05) is None
    assert loop.time() - started >= 0.05


async def test_a_put_wakes_the_waiting_get_at_once():
    inbox = Inbox()
    loop = asyncio.get_running_loop()
    loop.call_later(0.02, inbox.put_nowait, StreamEvent(b"x"))
    started = loop.time()
    assert await inbox.get(started + 5) == StreamEvent(b"x")
    assert loop.time() - started < bound(1)


async def test_a_cancelled_get_leaves_nothing_behind():
    inbox = Inbox()
    loop = asyncio.get_running_loop()
    waiting = asyncio.ensure_future(inbox.get(loop.time() + 5))
    while inbox._waiter is None:  # the get is waiting (an event, not a guessed delay)
        await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert inbox._waiter is None
    inbox.put_nowait(StreamEvent(b"later"))  # no waiter to wake: nothing raises, the item waits
    assert await inbox.get(loop.time()) == StreamEvent(b"later")
