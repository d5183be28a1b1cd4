"""The only code that talks HTTP to conol: the transport behind a small Protocol, the pooled client,
error classification, the driver that runs one session, and the recording transport.

It imports LiteLLM in one private module only (``_aiohttp``: LiteLLM's aiohttp pool and its fast
path), which import-linter enforces.
"""

from __future__ import annotations

from ..core import is_public as is_public
from ._assets import AssetCache as AssetCache
from ._assets import asset_cache as asset_cache
from ._assets import upload_asset as upload_asset
from ._assets import upload_images as upload_images
from ._bindings import BindingStore as BindingStore
from ._bindings import binding_store as binding_store
from ._bindings import upstream_memory as upstream_memory
from ._discovery import DiscoveryCache as DiscoveryCache
from ._discovery import discovery_cache as discovery_cache
from ._discovery import fetch_agent_servers as fetch_agent_servers
from ._driver import SessionRun as SessionRun
from ._fetch import ImageFetcher as ImageFetcher
from ._followup import FollowUpRefused as FollowUpRefused
from ._followup import FollowUpStart as FollowUpStart
from ._followup import PinnedStart as PinnedStart
from ._followup import SessionStart as SessionStart
from ._http_errors import error_for_response as error_for_response
from ._http_errors import error_for_transport as error_for_transport
from ._pool import pooled_connections as pooled_connections
from ._pool import shared_client as shared_client
from ._recording import RecordingTransport as RecordingTransport
from ._shared import SharedState as SharedState
from ._shared import shared_state as shared_state
from ._transport import EventSource as EventSource
from ._transport import EventStream as EventStream
from ._transport import SessionTransport as SessionTransport
from ._transport import Transport as Transport
