"""One settings model: every option the plugin reads, declared once, read by one parser.

Each :class:`Setting` says its name, kind, default, range or choices, environment variable, a
one-line doc and its **scope** (``docs/configuration.md#who-sets-what``):

* ``operator`` — the deployment's ``litellm_params`` or the environment only: where the proxy
  connects, what it may fetch and spend. A request body that names one is refused
  (``core/config/boundary.py``).
* ``narrow`` — a caller may tighten the operator's value, never widen it.
* ``request`` — the caller's to choose.

One coercion rule for every source: a YAML or environment string is read the way a JSON value is
(``"5"`` is 5, ``"true"`` is true), so a setting means the same wherever it is written; errors
name the option (or the environment variable) and what it takes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import BadRequest

Scope = Literal["operator", "narrow", "request"]
Kind = Literal["flag", "choice", "whole", "seconds", "text", "secret", "ports", "names", "structured"]
Source = Literal["param", "env", "default"]

_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
_FALSE_WORDS = frozenset({"false", "no", "off", "0"})
_WHOLE = re.compile(r"\+?\d+")


@dataclass(frozen=True)
class Setting:
    """One option. ``low``/``high`` bound numbers (``low_open``: ``low`` itself is refused);
    ``ranks`` orders a ``narrow`` choice (a caller may pick a rank at or below the operator's);
    ``when_true``/``when_false`` read YAML's bare ``on``/``off`` (booleans) as choice words."""

    name: str
    kind: Kind
    default: Any
    scope: Scope
    doc: str
    env: str | None = None
    param: bool = True  # False: the environment only (process-wide)
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    ranks: Mapping[str, int] | None = None
    when_true: str | None = None
    when_false: str | None = None
    section: str = "connection"

    def describe(self) -> str:
        """What the option takes, as an error message and the reference page say it."""
        if self.kind == "flag":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind in ("whole", "seconds"):
            unit = "a whole number" if self.kind == "whole" else "a number of seconds"
            return f"{unit} {_range_words(self)}"
        if self.kind == "ports":
            return "a list of port numbers (1 to 65535)"
        if self.kind == "names":
            return "a list of option names"
        return "a non-empty string"

    def coerce(self, value: Any, source: str | None = None) -> Any:
        """``value`` read as this option (``None`` → the default; a blank string is no value, and
        the environment's blank variables are skipped before this); a 400 naming ``source``."""
        if value is None:
            return self.default
        reader = _READERS[self.kind]
        result = reader(self, value)
        if result is _INVALID:
            shown = "a value" if self.kind == "secret" else repr(value)
            raise BadRequest(f"{source or self.name} must be {self.describe()}, got {shown}")
        return result


def _shown(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


def _range_words(setting: Setting) -> str:
    low = None if setting.low is None else _shown(setting.low)
    high = None if setting.high is None else _shown(setting.high)
    if low is not None and high is not None:
        if setting.low_open:
            return f"more than {low} and at most {high}"
        return f"from {low} to {high}"
    if low is not None:
        return f"more than {low}" if setting.low_open else f"of at least {low}"
    return f"of at most {high}" if high is not None else ""


_INVALID: Any = object()


def _flag(_: Setting, value: Any) -> Any:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower() if isinstance(value, str | int) else ""
    return True if word in _TRUE_WORDS else False if word in _FALSE_WORDS else _INVALID


def _choice(setting: Setting, value: Any) -> Any:
    if isinstance(value, bool):  # YAML reads a bare `off` as false and `on` as true
        word = setting.when_true if value else setting.when_false
        return word if word is not None else _INVALID
    word = value.strip().lower() if isinstance(value, str) else None
    return word if word in setting.choices else _INVALID


def _number(setting: Setting, value: Any) -> Any:
    if isinstance(value, bool):
        return _INVALID
    if isinstance(value, str):
        text = value.strip()
        if setting.kind == "whole":
            number: float = int(text) if _WHOLE.fullmatch(text) else math.nan
        else:
            try:
                number = float(text)
            except ValueError:
                return _INVALID
    elif isinstance(value, int | float):
        number = value
    else:
        return _INVALID
    if setting.kind == "whole" and not isinstance(number, int):
        return _INVALID
    if not math.isfinite(number) or not _in_range(setting, number):
        return _INVALID
    return number if setting.kind == "whole" else float(number)


def _in_range(setting: Setting, number: float) -> bool:
    low, high = setting.low, setting.high
    if low is not None and (number <= low if setting.low_open else number < low):
        return False
    return high is None or number <= high


def _text(_: Setting, value: Any) -> Any:
    return value.strip() if isinstance(value, str) and value.strip() else _INVALID


def _items(value: Any) -> list[Any] | None:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return list(value) if isinstance(value, list | tuple | frozenset | set) else None


def _ports(setting: Setting, value: Any) -> Any:
    items = _items(value)
    port = Setting("port", "whole", None, "operator", "", low=1, high=65535)
    ports = [_number(port, item) for item in items or ()]
    if items is None or not ports or _INVALID in ports:
        return _INVALID
    return frozenset(ports)


def _names(_: Setting, value: Any) -> Any:
    items = _items(value)
    if items is None or not all(isinstance(item, str) and item.strip() for item in items):
        return _INVALID
    return tuple(item.strip() for item in items)


def _raw(_: Setting, value: Any) -> Any:
    return value  # a structured OpenAI parameter: its own reader checks it (see ``doc``)


_READERS = {
    "flag": _flag,
    "choice": _choice,
    "whole": _number,
    "seconds": _number,
    "text": _text,
    "secret": _text,
    "ports": _ports,
    "names": _names,
    "structured": _raw,
}


@dataclass(frozen=True)
class Settings:
    """The values of one call, each with where it came from (a parameter, the environment, the
    default): Redis settings are taken as a group from the first place that has any."""

    values: Mapping[str, Any]
    sources: Mapping[str, Source]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def source(self, name: str) -> Source:
        return self.sources[name]


def read_settings(
    declared: Mapping[str, Setting], params: Mapping[str, Any], environ: Mapping[str, str]
) -> Settings:
    """Every declared option of one call, from ``params`` (a deployment's ``litellm_params`` merged
    with the call's), else its environment variable, else its default; checked."""
    values: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    for name, setting in declared.items():
        raw = params.get(name) if setting.param else None
        source: Source = "param"
        where = name
        if raw is None and setting.env and environ.get(setting.env, "").strip():
            raw, source, where = environ[setting.env], "env", setting.env
        if raw is None:
            source = "default"
        values[name] = setting.coerce(raw, where)
        sources[name] = source
    return Settings(values=values, sources=sources)
