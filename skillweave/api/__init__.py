"""The control-plane REST API (FastAPI): skills, agents and runs over HTTP, served by
``skillweave api``. :func:`create_api` builds the app."""

from skillweave.api.app import ApiState, create_api

__all__ = ["ApiState", "create_api"]
