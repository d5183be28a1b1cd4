"""A small deterministic covering array of mixed strength: rows in which every combination of values
of every ``strength`` factors among ``strong`` appears together, and every pair of values of any two
factors appears together, in at least one row.

Greedy, in the manner of AETG: each uncovered combination (in factor and value order, the first
``SEEDS`` of them) seeds a candidate row; the candidate fills every other factor, in order, with the
value that covers the most uncovered combinations with the values already chosen; the candidate
covering the most becomes the next row (the first on a tie). The same factors always give the same
rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations, product
from typing import Any

Combo = tuple[tuple[int, int], ...]  # ((factor, value index), ...), factors ascending
SEEDS = 60  # candidate rows tried per row


def covering_array(
    factors: Mapping[str, Sequence[Any]], *, strength: int = 2, strong: Sequence[str] = ()
) -> list[dict[str, Any]]:
    names = list(factors)
    levels = [len(factors[name]) for name in names]
    uncovered = _combos(levels, range(len(names)), 2) | _combos(
        levels, [names.index(n) for n in strong], strength
    )
    rows: list[list[int]] = []
    while uncovered:
        seeds = sorted(uncovered)[:SEEDS]
        candidates = [_row(uncovered, levels, seed) for seed in seeds]
        row = max(candidates, key=lambda r: len(_covered(r, uncovered)))
        uncovered -= _covered(row, uncovered)
        rows.append(row)
    return [{name: factors[name][row[k]] for k, name in enumerate(names)} for row in rows]


def _combos(levels: Sequence[int], among: Sequence[int], strength: int) -> set[Combo]:
    out: set[Combo] = set()
    for chosen in combinations(sorted(among), strength):
        for values in product(*(range(levels[f]) for f in chosen)):
            out.add(tuple(zip(chosen, values, strict=True)))
    return out


def _row(uncovered: set[Combo], levels: Sequence[int], seed: Combo) -> list[int]:
    chosen: dict[int, int] = dict(seed)
    for factor in range(len(levels)):
        if factor not in chosen:
            chosen[factor] = max(range(levels[factor]), key=lambda v: _gain(uncovered, chosen, factor, v))
    return [chosen[factor] for factor in range(len(levels))]


def _gain(uncovered: set[Combo], chosen: Mapping[int, int], factor: int, value: int) -> int:
    """How many uncovered combinations of ``factor=value`` with one or two chosen values it covers."""
    picked = sorted(chosen.items())
    gain = 0
    for size in (1, 2):
        for others in combinations(picked, size):
            combo = tuple(sorted((*others, (factor, value))))
            gain += combo in uncovered
    return gain


def _covered(row: Sequence[int], uncovered: set[Combo]) -> set[Combo]:
    return {combo for combo in uncovered if all(row[f] == v for f, v in combo)}


def covers(
    factors: Mapping[str, Sequence[Any]],
    rows: Sequence[Mapping[str, Any]],
    *,
    strength: int = 2,
    strong: Sequence[str] = (),
) -> bool:
    """Whether ``rows`` hold every pair of values of any two factors, and every combination of
    ``strength`` values among the ``strong`` factors."""
    groups = [*combinations(list(factors), 2), *combinations(list(strong), strength)]
    for group in groups:
        seen = {tuple(repr(row[name]) for name in group) for row in rows}
        for values in product(*(factors[name] for name in group)):
            if tuple(repr(v) for v in values) not in seen:
                return False
    return True
