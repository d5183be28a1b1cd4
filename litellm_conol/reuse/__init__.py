"""Session reuse and the memory of failures: what one request may take from an earlier one
(docs/session-reuse.md, docs/effort-and-retries.md#the-memory-of-recent-failures).

The pure rules and the storage sit side by side:

* pure (no I/O, no clock; import-linter keeps them so): ``fingerprint`` (the canonical history and
  the binding), ``turns`` (continue or start fresh, what a follow-up sends, whether to bind),
  ``known_failures`` (when a repeated failure is refused);
* storage: ``shared_state`` (memory or Redis, shared by a fleet), ``store`` (bindings and what was
  learnt about each upstream);
* orchestration, called by the provider: ``session_reuse`` (one request's reuse) and
  ``failure_guard`` (one request's failure memory).

It sits between ``provider`` (which calls it) and ``client`` (whose driver it hands a follow-up).
"""
