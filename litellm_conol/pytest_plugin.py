"""pytest fixtures for testing against the fake conol server (registered via the ``pytest11`` entry point).

* ``conol_fake_session``: one running ``FakeConol`` for the whole test session (background thread).
* ``conol_fake``: the same server, ``reset()`` before and after each test: no records, sessions,
  faults or extra scenarios leak between tests, nor an account resting after a credit error
  (``litellm_conol.reuse.accounts.forget_accounts``: what this process remembers of the accounts).

Point a client at ``conol_fake.base_url`` with ``conol_fake.token`` as the session token.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .fake import FakeConol


@pytest.fixture(scope="session")
def conol_fake_session() -> Iterator[FakeConol]:
    """One running ``FakeConol`` for the whole test session, in a background thread."""
    # imported here: loading the plugin must stay cheap for test runs that never use the fake
    from .fake import FakeConol

    with FakeConol() as fake:
        yield fake


@pytest.fixture
def conol_fake(conol_fake_session: FakeConol) -> Iterator[FakeConol]:
    """The session's ``FakeConol``, ``reset()`` before and after the test, and no account resting."""
    # imported here: loading the plugin must stay cheap for test runs that never use the fake
    from .reuse.accounts import forget_accounts

    conol_fake_session.reset()
    forget_accounts()
    yield conol_fake_session
    conol_fake_session.reset()
    forget_accounts()
