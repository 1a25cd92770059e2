"""The control-plane REST API (FastAPI): skills, agents and runs over HTTP, served by
``skillweave api``. :func:`create_api` builds the app."""

from skillweave.api.app import create_api
from skillweave.api.state import ApiComposition, ApiState

__all__ = ["ApiComposition", "ApiState", "create_api"]
