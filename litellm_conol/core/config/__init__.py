"""The options a call runs with: every option declared once (``table``), read through the
operator/caller boundary (``boundary``), into the typed request (``options``), with its time budgets,
credential and session-reuse options (docs/configuration.md)."""
