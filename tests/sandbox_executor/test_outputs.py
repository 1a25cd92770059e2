"""Output collection, disk usage and clean-up over trees a script shaped to break them: deep
(far past PATH_MAX and the recursion limit), wide, unreadable, full of symlinks and of names
no store key can carry. Each must end, bounded, with the other outputs kept."""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox_executor import workspace as workspace_module
from sandbox_executor.disk import usage
from sandbox_executor.errors import RequestRejectedError
from sandbox_executor.results import collect_within_budget
from sandbox_executor.runner import RunOutcome
from sandbox_executor.workspace import (
    MAX_OUTPUT_DEPTH,
    MAX_SKIPPED_LISTED,
    Workspace,
    collect_outputs,
    create_workspace,
    fill_workspace,
)
from skillweave.sandbox.models import ExecutionLimits
from skillweave.skills.files import remove_tree
from skillweave.skills.package import MAX_PATH_DEPTH

LONG: str = "d" * 200
"""A folder name long enough that 3,000 levels of it are a path of 600 KB (PATH_MAX: 4 KB)."""


@pytest.fixture(autouse=True)
def _removed(tmp_path: Path) -> Iterator[None]:
    """Each test's deep trees removed after it (pytest's own clean-up recurses, and fails)."""
    yield
    for entry in list(tmp_path.iterdir()):
        remove_tree(entry)


def _workspace(tmp_path: Path) -> Workspace:
    folder = tmp_path / "attempt"
    folder.mkdir()
    return create_workspace(folder, user=None)


def _deep(root: Path, levels: int, *, name: str = LONG, lock_every: int = 0) -> None:
    """`levels` nested folders under `root`, a file and a symlink to / at each level, made
    with folder fds (their paths are too long for anything else); every `lock_every`-th
    folder left with mode 000."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for level in range(levels):
        os.mkdir(name, dir_fd=fd)
        os.close(os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
        os.symlink("/", "root-link", dir_fd=fd)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        if lock_every and level % lock_every == 0:
            os.fchmod(fd, 0)
        os.close(fd)
        fd = inner
    os.close(fd)


def _fds_under(root: Path) -> list[str]:
    """What this process holds open under root: a leaked descriptor stays there after the walk.

    Counting every descriptor raced with other threads of the test process closing theirs.
    """
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(root)):
            held.append(target)
    return held


def test_a_deep_outputs_tree_is_skipped_and_the_other_outputs_are_kept(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    (workspace.outputs / "report.txt").write_text("kept")
    (workspace.outputs / "deep").mkdir()
    _deep(workspace.outputs / "deep", 1500, name="d")
    collected = collect_outputs(workspace, max_files=100)

    assert _fds_under(tmp_path) == []
    assert collected.error is None
    names = [item.name for item in collected.files]
    assert "outputs/report.txt" in names
    # Each level above the bound holds a file: kept, as long as its folder is within it.
    assert len(names) == 1 + MAX_OUTPUT_DEPTH
    deepest = "/".join(["deep", *["d"] * MAX_OUTPUT_DEPTH])
    assert [(s.path, s.reason) for s in collected.skipped] == [
        (
            f"{deepest}/",
            f"a folder deeper than {MAX_OUTPUT_DEPTH} levels under outputs/;"
            " nothing in it was kept",
        )
    ]


def test_past_the_entry_bound_what_was_read_is_kept_and_the_rest_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace_module, "MAX_OUTPUT_ENTRIES", 50)
    workspace = _workspace(tmp_path)
    (workspace.outputs / "a.txt").write_text("a")
    wide = workspace.outputs / "wide"
    wide.mkdir()
    for index in range(200):
        (wide / f"{index:03d}").write_text("x")

    collected = collect_outputs(workspace, max_files=1000)

    assert collected.error is None
    assert "outputs/a.txt" in [item.name for item in collected.files]
    assert [(s.path, s.reason) for s in collected.skipped] == [
        ("wide/", "more than 50 entries under outputs/; the rest was not read")
    ]


@pytest.mark.parametrize(
    ("name", "shown", "reason"),
    [
        (b"new\nline.txt", "new\\x0aline.txt", "control character"),
        (b"tab\there", "tab\\x09here", "control character"),
        (b"esc\x1b[31m", "esc\\x1b[31m", "control character"),
        (b"cr\r", "cr\\x0d", "control character"),
        (b"latin-\xe9.txt", "latin-\\xe9.txt", "not UTF-8"),
        ("é".encode() * 50, "é" * 50, "255"),
    ],
)
def test_a_name_no_key_can_carry_is_skipped_beside_good_outputs(
    tmp_path: Path, name: bytes, shown: str, reason: str
) -> None:
    workspace = _workspace(tmp_path)
    (workspace.outputs / "good.txt").write_text("good")
    (workspace.outputs / "sub").mkdir()
    (workspace.outputs / "sub" / "also good.md").write_text("also")
    with open(os.path.join(bytes(workspace.outputs), name), "wb") as handle:
        handle.write(b"bad")
    os.mkdir(os.path.join(bytes(workspace.outputs), name + b"-dir"))
    with open(os.path.join(bytes(workspace.outputs), name + b"-dir", b"inside"), "wb") as handle:
        handle.write(b"bad")

    collected = collect_outputs(workspace, max_files=10)

    assert collected.error is None
    assert sorted(item.name for item in collected.files) == [
        "outputs/good.txt",
        "outputs/sub/also good.md",
    ]
    skipped = {item.path: item.reason for item in collected.skipped}
    assert set(skipped) == {shown, f"{shown}-dir/"}
    assert all(reason in why for why in skipped.values()), skipped
    assert all(c.isprintable() for path in skipped for c in path)


def test_symlinks_and_other_files_are_never_outputs(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret.txt").write_text("host")
    (workspace.outputs / "link.txt").symlink_to(host / "secret.txt")
    (workspace.outputs / "folder-link").symlink_to(host)
    os.mkfifo(workspace.outputs / "fifo")
    (workspace.outputs / "real.txt").write_text("real")

    collected = collect_outputs(workspace, max_files=10)

    assert [item.name for item in collected.files] == ["outputs/real.txt"]
    assert collected.skipped == []


def test_outputs_replaced_by_a_symlink_is_no_outputs_and_says_why(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret.txt").write_text("host")
    workspace.outputs.rmdir()
    workspace.outputs.symlink_to(host)

    collected = collect_outputs(workspace, max_files=10)

    assert collected.files == []
    assert collected.error is not None
    assert "outputs/ is no longer a folder" in collected.error


def test_skipped_outputs_are_listed_up_to_a_bound(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    for index in range(MAX_SKIPPED_LISTED + 30):
        (workspace.outputs / f"bad\n{index:03d}").write_text("x")
    (workspace.outputs / "good.txt").write_text("good")

    collected = collect_outputs(workspace, max_files=10)

    assert [item.name for item in collected.files] == ["outputs/good.txt"]
    assert len(collected.skipped) == MAX_SKIPPED_LISTED + 1
    assert collected.skipped[-1].reason == "30 more were skipped"


def test_a_collection_that_fails_is_an_answer_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = _workspace(tmp_path)

    def broken(*_: object, **__: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("sandbox_executor.results.collect_outputs", broken)
    outcome = RunOutcome(exit_code=0, timed_out=False, cancelled=False, duration_ms=1)
    collected = collect_within_budget(workspace, [(workspace.root, ())], ExecutionLimits(), outcome)
    assert collected.files == []
    assert collected.error is not None
    assert "collecting the outputs failed (RecursionError" in collected.error


def test_disk_usage_counts_files_past_path_max(tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "skill").mkdir()
    (root / "skill" / "package.bin").write_bytes(b"x" * 1000)
    _deep(root, 3000)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(2999):
        inner = os.open(LONG, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    data = os.open("far.bin", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(data, b"y" * 5000)
    os.close(data)
    os.close(fd)

    links = 3000  # a symlink's apparent size is its target's length: "/", 1 byte
    assert usage(root, skip=("skill",)) == 5000 + links
    assert usage(root) == 1000 + 5000 + links


def test_remove_tree_removes_a_tree_of_any_depth_and_mode_following_no_link(
    tmp_path: Path,
) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "canary").write_text("stays")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "host-link").symlink_to(host)
    _deep(tree, 3000, lock_every=7)
    os.chmod(tree, 0)
    remove_tree(tree)

    assert _fds_under(tmp_path) == []
    assert not os.path.lexists(tree)
    assert (host / "canary").read_text() == "stays"


def test_remove_tree_as_the_owner_gives_back_the_bits_a_script_took(tmp_path: Path) -> None:
    """Not root (an executor in a pod): a folder of mode 000 is unreadable until chmodded."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become another user")
    top = Path("/tmp") / f"remove-tree-{os.getpid()}"
    top.mkdir(mode=0o755)
    os.chown(top, 65534, 65534)
    tree = top / "tree"
    try:
        pid = os.fork()
        if pid == 0:  # the child: another user, with nothing but what it owns
            code = 1
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                tree.mkdir()
                _deep(tree, 1200, lock_every=3)
                os.chmod(tree, 0)
                remove_tree(tree)
                code = 3 if os.path.lexists(tree) else 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert not os.path.lexists(tree)
    finally:
        remove_tree(top)


def test_a_package_as_deep_as_a_package_may_be_fills_read_only(tmp_path: Path) -> None:
    """Marking the package read-only walks it without recursion; a deeper package is refused
    before anything is written (``skills.package.MAX_PATH_DEPTH``)."""
    levels = MAX_PATH_DEPTH - 2  # the top folder and the file are path components too
    buffer = io.BytesIO()
    deep = "/".join(["a"] * levels)
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("deep/SKILL.md", "---\nname: deep\ndescription: -\n---\n")
        archive.writestr(f"deep/{deep}/bottom.py", "print('deep')\n")
    workspace = _workspace(tmp_path)

    fill_workspace(workspace, package=buffer.getvalue(), inputs=[])

    fd = os.open(workspace.skill, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        inner = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        assert os.fstat(fd).st_mode & 0o777 == 0o555
        os.close(fd)
        fd = inner
    assert os.stat("bottom.py", dir_fd=fd).st_mode & 0o777 == 0o444
    os.close(fd)

    deeper = io.BytesIO()
    with zipfile.ZipFile(deeper, "w") as archive:
        archive.writestr("deep/SKILL.md", "---\nname: deep\ndescription: -\n---\n")
        archive.writestr("deep/" + "a/" * 1100 + "bottom.py", "print('deep')\n")
    (tmp_path / "other").mkdir()
    other = _workspace(tmp_path / "other")
    with pytest.raises(RequestRejectedError, match="nested more than 64 folders deep") as refused:
        fill_workspace(other, package=deeper.getvalue(), inputs=[])
    assert len(str(refused.value)) < 400  # one line, the name shown by its two ends
    assert not any(other.skill.iterdir())
