"""What people run around the provider: ``litellm-conol doctor``, ``accounts``, ``record``,
``models --check``, and the generated references (``settings``, ``commands``, ``metrics``); the CLI in
``litellm_conol.cli`` calls these."""

from __future__ import annotations

from .accounts import accounts_command as accounts_command
from .cli_doc import cli_command as cli_command
from .cli_doc import cli_markdown as cli_markdown
from .doctor import Check as Check
from .doctor import DoctorSettings as DoctorSettings
from .doctor import check_models as check_models
from .doctor import report_json as report_json
from .doctor import report_text as report_text
from .doctor import run_doctor as run_doctor
from .doctor import run_reuse_doctor as run_reuse_doctor
from .record import record_session as record_session
from .refresh import Refreshed as Refreshed
from .refresh import check_command as check_command
from .refresh import refresh_catalog as refresh_catalog
from .refresh import refresh_command as refresh_command
from .settings_doc import reference_markdown as reference_markdown
from .settings_doc import settings_command as settings_command
from .settings_doc import write_reference as write_reference
