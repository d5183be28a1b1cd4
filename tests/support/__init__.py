"""Helpers shared by the test tiers (tests/README.md): processes, event builders, requests, time bounds.

Importable as ``support.*`` because pytest puts ``tests/`` on ``sys.path`` (its ``conftest.py`` has no
package around it); every proxy subprocess gets ``PYTHONPATH=tests`` for callbacks such as
``support.spend_logger``.
"""
