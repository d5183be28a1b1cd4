"""Helpers shared by the test tiers (tests/README.md): processes, event builders, requests, time bounds.

Importable as ``support.*`` because pytest puts ``tests/`` on ``sys.path`` (its ``conftest.py`` has no
package around it); the proxy subprocess gets ``PYTHONPATH=tests`` for ``support.spend_logger``.
"""
