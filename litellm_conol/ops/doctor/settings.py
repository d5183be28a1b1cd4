"""What a ``doctor`` run is given (``DoctorSettings``), and the timeout of each HTTP request it makes."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.models.catalog import CatalogModel
from ...core.protocol.endpoint import Endpoint

REQUEST_TIMEOUT = 10.0


@dataclass(frozen=True)
class DoctorSettings:
    endpoint: Endpoint
    model: CatalogModel  # the model of the session and tool checks
    models: tuple[CatalogModel, ...] = ()  # one downgrade check each; empty: none
    session_timeout: float = 20.0
    budget: float = 55.0  # the whole run: an answer within a minute
