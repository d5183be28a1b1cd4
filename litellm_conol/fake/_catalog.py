"""Which ``agentModel`` values the fake runs as asked: the package's model catalog, read as data.

The fake imports nothing else of the package, so it reads the catalog file itself rather than
going through the package's loader; the catalog stays the one place that lists conol's models.
"""

from __future__ import annotations

import json
from pathlib import Path

_CATALOG_FILE = Path(__file__).resolve().parents[1] / "core" / "models" / "models.json"


def _catalog_agent_models() -> frozenset[str]:
    catalog = json.loads(_CATALOG_FILE.read_text(encoding="utf-8"))
    return frozenset(model["agent_model"] for model in catalog["models"])


# The known agentModel ids: anything else is accepted but silently downgraded
# (docs/protocol.md#models-and-downgrades).
KNOWN_MODELS = _catalog_agent_models()
DOWNGRADE_MODEL = "deepseek/deepseek-v4-flash"
