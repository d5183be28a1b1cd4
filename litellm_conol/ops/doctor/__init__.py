"""``litellm-conol doctor``: does conol still speak the protocol this package was written for?

conol's web API is not a published API; it changes without notice. Each check exercises one thing
the provider relies on, with the provider's own transport and driver (a real session, exactly as a
chat request runs it), and judges the shapes conol sent back, so a failure names what moved. One
module per family of checks:

* ``account``: ``token`` and ``balance``;
* ``capabilities``: ``assets``, ``discovery``, ``contextUsage`` and ``framing`` (PASS, FAIL or ABSENT);
* ``session``: ``create``, ``stream``, ``previews``, ``status`` and ``tool_call``;
* ``models``: one ``model <id>`` line per catalog model (does conol downgrade it for this account?),
  also ``litellm-conol models --check``;
* ``reuse``: ``doctor --reuse`` (follow-up turns and model pinning);
* ``run``: all but ``reuse`` in a fixed order under one budget; ``report``: ``Check``, its timing,
  and the text and JSON reports.
"""

from __future__ import annotations

from .models import check_models as check_models
from .report import Check as Check
from .report import report_json as report_json
from .report import report_text as report_text
from .reuse import run_reuse_doctor as run_reuse_doctor
from .run import run_doctor as run_doctor
from .settings import DoctorSettings as DoctorSettings
