"""The built-in scenarios. Each is small and deterministic; delays are realistic (10-50 ms apart).

``BUILTINS`` maps name -> Scenario; each scenario's ``final_text`` / ``final_reasoning`` /
``tool_calls`` / ``outcome`` (and ``expected_for(...)`` for prompt-dependent ones) say what a correct
client returns, so tests never hard-code texts.

One module per theme: ``_core`` (plain answers, endings, closes, event shapes), ``_limits`` (stop
sequences, max_tokens), ``_tools`` (client tools, built-in web search), ``_faults`` (failing creates,
stalls, malformed events), ``_structured`` (JSON answers and tool arguments with repair turns),
``_agent_errors`` (agent failures of each class: out of credits, unexplained, transient, deterministic),
``_readings`` (the event shapes other clients read: stream_event/assistant, done flag, windowReset,
the credit-error preview).
"""

from __future__ import annotations

from .._scenarios import Scenario
from ._agent_errors import (
    CREDIT_MESSAGE,
    DETERMINISTIC_MESSAGE,
    TRANSIENT_MESSAGE,
    UNEXPLAINED_MESSAGE,
    agent_error_scenarios,
)
from ._common import long_text
from ._core import HELLO_TEXT, HELLO_THINKING, UNICODE_TEXT, UNICODE_THINKING, core_scenarios
from ._faults import BAD_GATEWAY_HTML, fault_scenarios
from ._limits import STOP_SEQUENCE, STOP_SPLIT_ANSWER, STOP_SPLIT_TEXT, limit_scenarios
from ._readings import CREDIT_ERROR, RESET_SNAPSHOT, reading_scenarios
from ._structured import (
    CITY_WRONG_KEY,
    NOT_JSON,
    PERSON,
    PERSON_CUT,
    PERSON_JSON,
    PERSON_WRONG_TYPE,
    answers_since_request,
    structured_scenarios,
)
from ._tools import AGENT_TEXT, AGENT_THINKING, PARIS, TOKYO, WEATHER_THINKING, tool_result_in, tool_scenarios

# the order is the listing order (``--list-scenarios``, ``GET /_fake/scenarios``)
BUILTINS: dict[str, Scenario] = {
    s.name: s
    for s in [
        *core_scenarios(),
        *limit_scenarios(),
        *tool_scenarios(),
        *fault_scenarios(),
        *structured_scenarios(),
        *agent_error_scenarios(),
        *reading_scenarios(),
    ]
}

__all__ = [
    "AGENT_TEXT",
    "AGENT_THINKING",
    "BAD_GATEWAY_HTML",
    "BUILTINS",
    "CITY_WRONG_KEY",
    "CREDIT_ERROR",
    "CREDIT_MESSAGE",
    "DETERMINISTIC_MESSAGE",
    "HELLO_TEXT",
    "HELLO_THINKING",
    "NOT_JSON",
    "PARIS",
    "PERSON",
    "PERSON_CUT",
    "PERSON_JSON",
    "PERSON_WRONG_TYPE",
    "RESET_SNAPSHOT",
    "STOP_SEQUENCE",
    "STOP_SPLIT_ANSWER",
    "STOP_SPLIT_TEXT",
    "TOKYO",
    "TRANSIENT_MESSAGE",
    "UNEXPLAINED_MESSAGE",
    "UNICODE_TEXT",
    "UNICODE_THINKING",
    "WEATHER_THINKING",
    "answers_since_request",
    "long_text",
    "tool_result_in",
]
