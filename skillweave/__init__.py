"""skillweave: durable skills for long-running LLM agents.

The core library. It owns the Agent Skills format and skill libraries (``skillweave.skills``),
configuration (``skillweave.config``) and the error tree (``skillweave.errors``); later layers
(agent loop, providers, storage, sandboxes, engines) build on these.
"""

__version__ = "0.1.0"
