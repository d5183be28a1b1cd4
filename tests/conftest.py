"""Settings for every tier (tests/README.md): no network for LiteLLM's cost map, no conol credentials
from the environment. ``tests/`` is on ``sys.path`` (this file has no package), so ``support`` imports."""

import os

# Before anything imports litellm: never fetch the cost map from the network (it stalls for seconds).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.pop("CONOL_SESSION_TOKEN", None)  # tests pass credentials explicitly
os.environ.pop("CONOL_API_BASE", None)

# Fixtures shared by tiers (each documented in its module).
pytest_plugins = ["support.echoes"]
