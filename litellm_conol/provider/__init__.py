"""The only package that imports LiteLLM: the ``CustomLLM`` handler for ``conol/<model>`` (the four
entry points share one exchange), chunk and response building, the sync bridge, registration, and
the one LiteLLM patch (``_params_patch``)."""

from __future__ import annotations

from ._handler import ConolLLM as ConolLLM
from ._handler import conol_llm as conol_llm
from ._params_patch import PROVIDER as PROVIDER
from ._registration import register as register
