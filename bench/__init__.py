"""Benchmarks: ``conol/…`` through our handler vs LiteLLM's own ``openai/…`` provider, side by side.

``python -m bench`` (or ``make bench``) runs everything; ``python -m bench --quick`` is a smoke run.
See ``bench/README.md``.
"""
