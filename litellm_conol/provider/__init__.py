"""The only package that imports LiteLLM: the ``CustomLLM`` handler for ``conol/<model>`` (the four
entry points share one exchange), chunk and response building, the sync bridge, registration, and
the one LiteLLM patch (``_params_patch``)."""

from __future__ import annotations

from .handler import ConolLLM as ConolLLM
from .handler import conol_llm as conol_llm
from .params_patch import PROVIDER as PROVIDER
from .registration import register as register
