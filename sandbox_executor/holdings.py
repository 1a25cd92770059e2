"""`Holdings`: what an executor gives back however it ends (the state of its finalizer).

Its stages, its captures, its folder (and the folder's life lock) and its sandbox uid. The
executor (``executor``) makes one and registers `Holdings.give_back` as its finalizer; its
attempts (``attempts``) add the stages and captures they make, and kill a stage through it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sandbox_executor.capture import Capture
from sandbox_executor.sandbox_user import SandboxUser
from sandbox_executor.stage import Stage
from sandbox_executor.workspace import remove_tree

__all__ = ["Holdings"]


@dataclass
class Holdings:
    """What an executor gives back however it ends (the state of its finalizer): its stages,
    its folder and its sandbox uid.

    The uid goes back marked clean (so its next holder need not sweep it first: see
    ``identity``) when nothing of it can run any more. In a contained mode every process of
    the sandbox user runs inside a stage's pid namespace, and a stage that ended by itself
    took its namespace along before it could be reaped: then no sweep is needed. A stage
    killed here, or killed during its run with a sweep that failed, or no namespace at all:
    sweep, and clean only if the sweep saw nothing alive.
    """

    folder: Path
    user: SandboxUser | None
    stages: list[Stage] = field(default_factory=list)
    captures: list[Capture] = field(default_factory=list)
    contained: bool = False
    killed_running: bool = False
    alive: int | None = None  # the folder's life lock (skillweave.sandbox.leftovers.hold_entry)

    def kill_stage(self, stage: Stage) -> None:
        """Kill a stage now (blocking briefly) and forget it."""
        self.killed_running |= stage.kill()
        self.stages.remove(stage)

    def give_back(self) -> None:
        """Kill the stages, close the captures, remove the folder, release the uid."""
        for stage in list(self.stages):
            self.kill_stage(stage)
        for capture in self.captures:
            capture.close()
        clean = False
        if self.user is not None:
            sweep = not self.contained or self.killed_running or self.user.sweep_failed
            clean = self.user.kill_all() if sweep else True
        remove_tree(self.folder)
        if self.alive is not None:
            os.close(self.alive)
            self.alive = None
        if self.user is not None:
            self.user.release(clean=clean)
