"""The only code that talks HTTP to conol: the transport behind a small Protocol, the pooled client,
error classification, the driver that runs one session, follow-up turns, image uploads and fetches,
discovery, and the recording transport. Modules import each other by path; nothing is re-exported.

It imports LiteLLM in one private module only (``aiohttp_stream``: LiteLLM's aiohttp pool and its fast
path), which import-linter enforces.
"""
