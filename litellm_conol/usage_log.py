"""A LiteLLM proxy callback for teams: one JSON line per request, saying who used what and what it cost.

In the proxy config::

    litellm_settings:
      callbacks: ["litellm_conol.usage_log.usage_logger"]

Each finished request (streamed or not, success or failure) becomes one line in the file named by
``CONOL_USAGE_LOG`` (appended; safe with several workers, each line is one ``write``), or, without
it, on standard error (the service's log: journald, ``docker logs``). A line has the name the member asked for
(``model_group``) and the conol model behind it, the end user (the request's ``user``) and the proxy
key's hash, alias, team and user, the token estimate, the cost the proxy computed from the
deployment's ``input_cost_per_token`` / ``output_cost_per_token`` (``model_info``), the conol session,
the sessions the request created and the follow-up turns it posted, whether it continued a session
(and why not), what refused it without a session (``refused_by``: ``failure_memory`` or
``settings_boundary``) and the worker's pid. LiteLLM's health checks are not logged (they create no
session). docs/team-deployment.md#usage-log-and-spend describes every field.

It reads what LiteLLM gives every callback (``standard_logging_object``, the same data its spend logs
are made of), so it is also an example to copy for a logger of your own.
"""

from __future__ import annotations

# The implementation lives in the provider layer (the only one that imports LiteLLM); this module
# keeps the path proxy configs name.
from .provider.usage_logger import ENV_USAGE_LOG as ENV_USAGE_LOG
from .provider.usage_logger import UsageLogger as UsageLogger
from .provider.usage_logger import conol_fields as conol_fields
from .provider.usage_logger import usage_logger as usage_logger
from .provider.usage_logger import usage_record as usage_record
