"""A build that failed for a reason worth telling: :class:`BuildFailed`.

Raised by the build sandbox (``_sandbox``), the installers (``_installers``) and packing
(``_packing``); the builder (``_builder``) records it and raises ``EnvironmentBuildError``.
"""

from __future__ import annotations

__all__ = ["BuildFailed"]


class BuildFailed(Exception):
    """A build that failed for a reason worth telling (becomes ``EnvironmentBuildError``).

    Attributes:
        reason: what went wrong, in a sentence for the user.
        package: the package pip or npm blamed, when one was named.
    """

    def __init__(self, reason: str, package: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.package = package
