"""The LiteLLM glue: the ``CustomLLM`` handler for ``conol/<model>`` (the four entry points share one
exchange), chunk and response building, the sync bridge, registration, the params patch
(``params_patch``), what LiteLLM's auth and logging hold (``caller``, ``usage_fields``) and every
LiteLLM internal it reads or patches (``litellm_compat``: the generateContent shim too). The only
other module that imports LiteLLM is the client's ``aiohttp_stream`` (LiteLLM's aiohttp pool);
import-linter keeps it so."""

from __future__ import annotations

from .handler import ConolLLM as ConolLLM
from .handler import conol_llm as conol_llm
from .params_patch import PROVIDER as PROVIDER
from .registration import register as register
