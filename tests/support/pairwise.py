"""A small deterministic pairwise covering array: rows in which every value of every factor appears, and
every pair of values of two factors appears together in at least one row.

Greedy, in the manner of AETG with every uncovered pair as a candidate seed instead of random ones: a
candidate row starts from its seed pair, then takes for every other factor, in order, the value that
covers the most uncovered pairs with the values already chosen; the candidate covering the most
uncovered pairs becomes the next row (the first such one on a tie, seeds in factor and value order).
The same factors always give the same rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

Pair = tuple[int, int, int, int]  # (factor a, value index in a, factor b, value index in b), a < b


def pairwise(factors: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    names = list(factors)
    levels = [len(factors[name]) for name in names]
    uncovered: set[Pair] = {
        (a, i, b, j)
        for a, b in combinations(range(len(names)), 2)
        for i in range(levels[a])
        for j in range(levels[b])
    }
    rows: list[list[int]] = []
    while uncovered:
        candidates = [_row(uncovered, levels, seed) for seed in sorted(uncovered)]
        row = max(candidates, key=lambda r: len(_pairs(r) & uncovered))
        uncovered -= _pairs(row)
        rows.append(row)
    return [{name: factors[name][row[k]] for k, name in enumerate(names)} for row in rows]


def _row(uncovered: set[Pair], levels: Sequence[int], seed: Pair) -> list[int]:
    a, i, b, j = seed
    chosen: dict[int, int] = {a: i, b: j}
    for factor in range(len(levels)):
        if factor not in chosen:
            chosen[factor] = max(range(levels[factor]), key=lambda v: _gain(uncovered, chosen, factor, v))
    return [chosen[factor] for factor in range(len(levels))]


def _gain(uncovered: set[Pair], chosen: Mapping[int, int], factor: int, value: int) -> int:
    gain = 0
    for other, other_value in chosen.items():
        pair = (other, other_value, factor, value) if other < factor else (factor, value, other, other_value)
        gain += pair in uncovered
    return gain


def _pairs(row: Sequence[int]) -> set[Pair]:
    return {(a, row[a], b, row[b]) for a, b in combinations(range(len(row)), 2)}


def covers_every_pair(factors: Mapping[str, Sequence[Any]], rows: Sequence[Mapping[str, Any]]) -> bool:
    names = list(factors)
    for a, b in combinations(names, 2):
        seen = {(repr(row[a]), repr(row[b])) for row in rows}
        if any((repr(x), repr(y)) not in seen for x in factors[a] for y in factors[b]):
            return False
    return True
