"""The pure core: conol events in, OpenAI-shaped pieces out.

No LiteLLM, httpx or aiohttp (import-linter and ``tests/unit/test_layers.py`` keep it so), no clock,
socket, process, thread or mutable module state; the environment is read only in ``config.boundary``
and ``config.options`` (a variable is the fallback when a call gives no value) and files only in
``models.catalog`` (each catalog file read once), as ``tests/unit/test_purity.py`` checks: everything
here is tested with plain lists. Its rooms, in
the order they may import each other (a room imports only those after it):

* ``config``: the options a call runs with (the declared settings, the operator/caller boundary,
  budgets, the credential), read once per call.
* ``answer``: the answer a client gets (the assembler, the cutter that ends it, structured output).
* ``request``: the session a chat request becomes (rendering, tool hygiene, images).
* ``models``: which models conol runs (the catalog, discovery, effort ladders).
* ``protocol``: what conol sends and accepts (the wire format, SSE, event fields, when a session
  ends, agent failures, the turn boundary, the account answers).

``errors`` (the exception classes) and ``settings`` (what a setting is) sit below every room.
Modules import each other by path; nothing is re-exported here.
"""
