"""Closable: an object that is its own async context manager, closed by ``aclose()``.

The HTTP model providers (:mod:`skillweave.llm`), the scripted provider and the sandbox
client (:mod:`skillweave.sandbox.client`) derive from it, so ``async with`` means the same
for each: enter gives the object itself, exit awaits its ``aclose()``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

__all__ = ["Closable"]


class Closable(ABC):
    """An async context manager whose exit closes it: subclasses say what ``aclose`` frees."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @abstractmethod
    async def aclose(self) -> None:
        """Free what the object holds; safe to call again."""
