"""Which models conol runs: the bundled catalog (``models.json``), what discovery reads from the
agent servers, and the effort ladders. Imports only ``core.protocol`` (and the base modules)."""
