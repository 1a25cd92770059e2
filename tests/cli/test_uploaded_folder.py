"""Each process unpacks uploaded skills into a folder of its own; folders of processes that
are gone (a killed worker) are swept, folders of live ones kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from skillweave.skills.library import process_folder


def test_the_folder_is_per_process_and_dead_processes_folders_are_swept(tmp_path: Path) -> None:
    root = tmp_path / "uploaded"
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(gone.stdout)
    (root / f"worker-{dead_pid}" / "greeter").mkdir(parents=True)
    (root / f"worker-{dead_pid}.pinned" / f"greeter@{'0' * 64}").mkdir(parents=True)
    (root / f"api-{os.getppid()}").mkdir()  # a live process (this one's parent)
    (root / f"api-{os.getppid()}.pinned").mkdir()
    (root / "not-a-pid").mkdir()
    folder = process_folder(root, "worker")

    assert folder == root / f"worker-{os.getpid()}"
    assert not (root / f"worker-{dead_pid}").exists()
    assert not (root / f"worker-{dead_pid}.pinned").exists()
    assert (root / f"api-{os.getppid()}").is_dir()
    assert (root / f"api-{os.getppid()}.pinned").is_dir()
    assert (root / "not-a-pid").is_dir()
