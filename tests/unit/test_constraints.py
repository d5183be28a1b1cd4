"""One home per pin: ``constraints.txt`` holds what every tested LiteLLM line shares, and each
``constraints/litellm-<line>.txt`` reads it and pins only what differs on its line, the same
packages on every line (docs/litellm-versions.md#tested-range). Pure file reads."""

from __future__ import annotations

import re

from support.paths import ROOT

LINES = sorted((ROOT / "constraints").glob("litellm-*.txt"))
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)$", re.MULTILINE)


def pins(text: str) -> dict[str, str]:
    return {name.lower().replace("_", "-"): version for name, version in PIN.findall(text)}


def test_each_line_reads_the_shared_pins_and_pins_only_its_own():
    shared = pins((ROOT / "constraints.txt").read_text())
    own = {path.name: pins(path.read_text()) for path in LINES}
    assert [path.name for path in LINES] == ["litellm-1.108.txt", "litellm-1.110.txt"]
    for path in LINES:
        assert "-c ../constraints.txt" in path.read_text().splitlines(), path.name
    names = {name: sorted(found) for name, found in own.items()}
    assert names == {name: ["litellm", "litellm-enterprise"] for name in own}
    assert [name for name in ("litellm", "litellm-enterprise") if name in shared] == []
    assert own["litellm-1.108.txt"]["litellm"].startswith("1.108.")
    assert own["litellm-1.110.txt"]["litellm"].startswith("1.110.")
