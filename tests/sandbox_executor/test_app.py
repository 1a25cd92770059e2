"""The executor app in-process (httpx over ASGI), running real scripts in real sandboxes."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import stat
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox_executor import ExecutorSettings, IsolationUnavailableError, create_app
from sandbox_executor.run_order import check_request
from skillweave.sandbox.models import ExecutorRequest, ExecutorResult
from tests.sandbox_executor.conftest import MakeClient
from tests.sandbox_executor.support import AUTH, TOKEN, execute_form, make_environment, make_package

SECRET_ENV = {
    "SKILLWEAVE_HOST_SECRET_TOKEN": "do-not-leak",
    "AWS_SECRET_ACCESS_KEY": "do-not-leak-either",
}

HAPPY_SCRIPT = """\
import json, os, sys
data = open("inputs/a.txt", encoding="utf-8").read()
nested = open("inputs/more/c.txt", encoding="utf-8").read()
os.makedirs("outputs/sub", exist_ok=True)
with open("outputs/b.txt", "w", encoding="utf-8") as out:
    out.write(data.upper())
with open("outputs/sub/d.txt", "w", encoding="utf-8") as out:
    out.write(nested + " ".join(sys.argv[1:]))
print("read", data)
print("to stderr", file=sys.stderr)
"""


def _attempts(client: httpx.AsyncClient) -> list[Path]:
    """The attempt folders of the client's executor."""
    folder: Path = client._transport.app.state.executor.folder  # type: ignore[attr-defined]
    return sorted(folder.glob("attempt-*"))


async def _run(
    client: httpx.AsyncClient,
    request: dict[str, Any],
    files: dict[str, str | bytes],
    *,
    inputs: dict[str, bytes] | None = None,
    executable: tuple[str, ...] = (),
) -> ExecutorResult:
    response = await client.post(
        "/execute",
        headers=AUTH,
        **execute_form(request, make_package(files, executable=executable), inputs),
    )
    assert response.status_code == 200, response.text
    return ExecutorResult.model_validate(response.json())


async def test_healthz_needs_no_token(make_client: MakeClient) -> None:
    client = await make_client()
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ready"
    assert response.json()["isolation"] in {"bubblewrap", "namespaces"}


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}],
    ids=["missing", "wrong", "not-bearer"],
)
async def test_every_other_endpoint_needs_the_token(
    make_client: MakeClient, headers: dict[str, str]
) -> None:
    client = await make_client()
    form = execute_form({"script": "run.py"}, make_package({"run.py": "print(1)"}))
    calls = [
        client.post("/execute", headers=headers, **form),
        client.get("/files/stdout", headers=headers),
        client.delete("/execute", headers=headers),
    ]
    for call in calls:
        response = await call
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
    assert (await client.get("/healthz")).json()["status"] == "ready", "nothing ran"


@pytest.mark.parametrize(
    ("request_body", "files", "status", "detail"),
    [
        ({"script": "missing.py"}, {"run.py": "print(1)"}, 400, "not in the skill package"),
        ({"script": "../x.py"}, {"run.py": "print(1)"}, 400, "'..'"),
        ({"script": "scripts/../../x.py"}, {"run.py": "print(1)"}, 400, "'..'"),
        ({"script": "/etc/passwd"}, {"run.py": "print(1)"}, 400, "absolute"),
        ({"script": "notes.txt"}, {"notes.txt": "hello"}, 400, "unsupported type '.txt'"),
        ({"script": "SKILL.md"}, {}, 400, "unsupported type '.md'"),
        ({"script": "scripts"}, {"scripts/x.py": "1"}, 400, "not a file"),
        ({"script": "run.py", "env": {"LD_PRELOAD": "x"}}, {"run.py": "1"}, 400, "reserved"),
        ({"script": "run.py", "env": {"PATH": "/x"}}, {"run.py": "1"}, 400, "reserved"),
        ({"script": "run.py", "env": {"lower": "x"}}, {"run.py": "1"}, 400, "not a valid name"),
        ({"script": "run.py", "args": ["a\x00b"]}, {"run.py": "1"}, 400, "NUL"),
        ({"script": 5}, {"run.py": "1"}, 422, "script"),
        ({"args": []}, {"run.py": "1"}, 422, "script"),
        ({"script": "run.py", "limits": {"memory_mb": 1}}, {"run.py": "1"}, 422, "memory_mb"),
    ],
)
async def test_bad_requests_are_refused_with_a_clear_detail(
    make_client: MakeClient,
    request_body: dict[str, Any],
    files: dict[str, str],
    status: int,
    detail: str,
) -> None:
    client = await make_client()
    response = await client.post(
        "/execute", headers=AUTH, **execute_form(request_body, make_package(files))
    )
    assert response.status_code == status, response.text
    assert detail in response.json()["detail"]
    # Nothing ran: the executor takes a corrected request.
    assert (await client.get("/healthz")).json()["status"] == "ready"
    result = await _run(client, {"script": "run.py"}, {"run.py": "print('fine')"})
    assert result.stdout == "fine\n"


async def test_request_that_is_not_json_is_422(make_client: MakeClient) -> None:
    client = await make_client()
    response = await client.post(
        "/execute",
        headers=AUTH,
        data={"request": "{not json"},
        files=[("package", ("p.zip", make_package({"run.py": "1"})))],
    )
    assert response.status_code == 422
    assert "bad 'request' field" in response.json()["detail"]


@pytest.mark.parametrize(
    ("inputs", "detail"),
    [
        ({"../escape.txt": b"x"}, "'..'"),
        ({"/etc/passwd": b"x"}, "absolute"),
        ({"a/./b.txt": b"x"}, "'.' path component"),
        ({"a": b"x", "a/b.txt": b"y"}, "clashes"),
    ],
)
async def test_bad_input_names_are_refused(
    make_client: MakeClient, inputs: dict[str, bytes], detail: str
) -> None:
    client = await make_client()
    response = await client.post(
        "/execute",
        headers=AUTH,
        **execute_form({"script": "run.py"}, make_package({"run.py": "1"}), inputs),
    )
    assert response.status_code == 400, response.text
    assert detail in response.json()["detail"]


async def test_unsafe_or_missing_package_is_refused(make_client: MakeClient) -> None:
    client = await make_client()
    link = zipfile.ZipInfo("demo/link.py")
    link.create_system = 3
    link.external_attr = (0o120777) << 16
    unsafe = make_package({"run.py": "1"}, extra=[(link, b"/etc/passwd")])
    response = await client.post(
        "/execute", headers=AUTH, **execute_form({"script": "link.py"}, unsafe)
    )
    assert response.status_code == 400
    assert "symbolic link" in response.json()["detail"]

    no_package = await client.post(
        "/execute",
        headers=AUTH,
        data={"request": json.dumps({"script": "run.py"})},
        files=[("inputs", ("a.txt", b"a", "text/plain"))],
    )
    assert no_package.status_code == 400
    assert "'package'" in no_package.json()["detail"]

    not_multipart = await client.post(
        "/execute", headers=AUTH, data={"request": json.dumps({"script": "run.py"})}
    )
    assert not_multipart.status_code == 415
    assert "multipart/form-data" in not_multipart.json()["detail"]

    two_skills = make_package({"run.py": "1"}, extra=[("other/SKILL.md", b"---\n---\n")])
    response = await client.post(
        "/execute", headers=AUTH, **execute_form({"script": "run.py"}, two_skills)
    )
    assert response.status_code == 400
    assert "several skills" in response.json()["detail"]


async def test_happy_path_inputs_outputs_files_and_one_shot(make_client: MakeClient) -> None:
    client = await make_client()
    result = await _run(
        client,
        {"script": "scripts/run.py", "args": ["--flag", "two words", "$HOME;`x`"]},
        {"scripts/run.py": HAPPY_SCRIPT},
        inputs={"a.txt": b"hello", "more/c.txt": b"nested "},
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "read hello\n"
    assert result.stderr == "to stderr\n"
    assert not result.stdout_truncated
    assert result.full_stdout is None
    assert not result.timed_out
    assert not result.cancelled
    assert result.error is None
    assert [(f.name, f.size) for f in result.outputs] == [
        ("outputs/b.txt", 5),
        ("outputs/sub/d.txt", len("nested --flag two words $HOME;`x`")),
    ]

    fetched = await client.get("/files/outputs/b.txt", headers=AUTH)
    assert fetched.status_code == 200
    assert fetched.content == b"HELLO"
    nested = await client.get("/files/outputs/sub/d.txt", headers=AUTH)
    # Arguments reach the script as a list: no shell expanded $HOME or the backticks.
    assert nested.content == b"nested --flag two words $HOME;`x`"
    # What the run was given and left, and nothing else: one inode is one allocation. Its
    # small streams are in memory until they are asked for.
    (attempt,) = _attempts(client)
    assert sorted(p.name for p in attempt.iterdir()) == ["workspace"]
    stdout = await client.get("/files/stdout", headers=AUTH)
    assert stdout.content == b"read hello\n"
    stderr = await client.get("/files/stderr", headers=AUTH)
    assert stderr.content == b"to stderr\n"
    assert (await client.get("/files/stdout", headers=AUTH)).content == b"read hello\n"
    for name in ["outputs/missing.txt", "inputs/a.txt", "skill/SKILL.md", "../etc/passwd", "etc"]:
        assert (await client.get(f"/files/{name}", headers=AUTH)).status_code == 404, name
    assert sorted(p.name for p in attempt.iterdir()) == ["stderr", "stdout", "workspace"]
    assert {p.name for p in (attempt / "workspace").iterdir()} >= {
        "deps",
        "inputs",
        "outputs",
        "skill",
    }
    assert sorted(p.name for p in (attempt / "workspace" / "skill").iterdir()) == [
        "SKILL.md",
        "scripts",
    ]
    for capture in ("stdout", "stderr"):
        assert stat.S_IMODE((attempt / capture).stat().st_mode) == 0o600

    assert (await client.get("/healthz")).json()["status"] == "done"
    again = await client.post(
        "/execute",
        headers=AUTH,
        **execute_form({"script": "scripts/run.py"}, make_package({"scripts/run.py": "1"})),
    )
    assert again.status_code == 409
    assert "one-shot" in again.json()["detail"]
    cancel = await client.delete("/execute", headers=AUTH)
    assert cancel.json() == {"cancelled": False, "status": "done"}


async def test_package_at_the_root_and_direct_executables(make_client: MakeClient) -> None:
    client = await make_client()
    package = make_package({"tool": '#!/bin/sh\necho "tool $1"\n'}, top=None, executable=("tool",))
    response = await client.post(
        "/execute", headers=AUTH, **execute_form({"script": "tool", "args": ["ran"]}, package)
    )
    result = ExecutorResult.model_validate(response.json())
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "tool ran\n"


async def test_environment_is_scrubbed(
    make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRET_ENV.items():
        monkeypatch.setenv(name, value)
    client = await make_client()
    script = "import json, os\nprint(json.dumps(dict(os.environ)))\n"
    result = await _run(
        client,
        {"script": "env.py", "env": {"SKILL_API_KEY": "per-skill", "MODE": "x y"}},
        {"env.py": script},
    )
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    base = {
        "PATH",
        "HOME",
        "PWD",
        "LANG",
        "TMPDIR",
        "PYTHONPATH",
        "NODE_PATH",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
    }
    assert set(seen) == base | {"SKILL_API_KEY", "MODE"}
    assert seen["SKILL_API_KEY"] == "per-skill"
    assert seen["MODE"] == "x y"
    assert seen["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    assert seen["HOME"] != os.environ.get("HOME")
    assert seen["HOME"] == seen["PWD"]
    assert seen["PYTHONPATH"] == seen["HOME"] + "/skill"
    assert "do-not-leak" not in result.stdout
    assert TOKEN not in result.stdout


async def test_inline_output_is_truncated_and_the_full_capture_served(
    make_client: MakeClient,
) -> None:
    client = await make_client()
    # 3000 two-byte characters: the inline cut falls inside one and must not split it.
    script = "import sys\nsys.stdout.write('é' * 3000)\nsys.stderr.write('e' * 10)\n"
    result = await _run(
        client, {"script": "out.py", "limits": {"max_output_bytes": 1025}}, {"out.py": script}
    )
    assert result.stdout_truncated
    assert result.stdout == "é" * 512
    assert result.full_stdout is not None
    assert result.full_stdout.size == 6000
    assert not result.stderr_truncated
    assert result.full_stderr is None
    full = await client.get("/files/stdout", headers=AUTH)
    assert full.content.decode() == "é" * 3000


async def test_outputs_skip_symlinks_and_respect_the_file_count(make_client: MakeClient) -> None:
    client = await make_client()
    script = """\
import os
os.symlink("/etc/hostname", "outputs/link")
os.symlink("/", "outputs/rootlink")
open("outputs/real.txt", "w").write("r")
"""
    result = await _run(client, {"script": "out.py"}, {"out.py": script})
    assert [f.name for f in result.outputs] == ["outputs/real.txt"]
    assert (await client.get("/files/outputs/link", headers=AUTH)).status_code == 404
    assert (await client.get("/files/outputs/rootlink/etc/passwd", headers=AUTH)).status_code == 404

    client = await make_client()
    many = "for i in range(5):\n    open(f'outputs/{i}.txt', 'w').write(str(i))\n"
    result = await _run(
        client, {"script": "many.py", "limits": {"max_output_files": 3}}, {"many.py": many}
    )
    assert result.outputs == []
    assert result.error is not None
    assert "more than 3 files" in result.error


async def test_skill_and_inputs_are_read_only(make_client: MakeClient) -> None:
    client = await make_client()
    script = """\
import os
for path in ["skill/SKILL.md", "inputs/a.txt", "skill/new.txt", "inputs/new.txt"]:
    try:
        open(path, "a").write("x")
        print("wrote", path)
    except OSError as exc:
        print("refused", path, type(exc).__name__)
"""
    result = await _run(client, {"script": "w.py"}, {"w.py": script}, inputs={"a.txt": b"a"})
    assert "wrote" not in result.stdout, result.stdout
    assert result.stdout.count("refused") == 4


async def test_resource_limits_reach_the_script(make_client: MakeClient) -> None:
    client = await make_client()
    script = """\
import errno, json, resource
report = {}
files = []
try:
    for _ in range(100):
        files.append(open("/dev/null"))
except OSError as exc:
    report["open"] = errno.errorcode[exc.errno]
for file in files:
    file.close()
try:
    with open("outputs/big.bin", "wb") as out:
        out.write(b"x" * (2 * 1024 * 1024))
except OSError as exc:
    report["write"] = errno.errorcode[exc.errno]
for name in ["RLIMIT_DATA", "RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE"]:
    report[name] = resource.getrlimit(getattr(resource, name))[0]
print(json.dumps(report))
"""
    limits = {"max_open_files": 16, "max_file_mb": 1, "memory_mb": 200, "max_processes": 20}
    result = await _run(client, {"script": "lim.py", "limits": limits}, {"lim.py": script})
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["open"] == "EMFILE"
    assert report["write"] == "EFBIG"
    assert [(f.name, f.size) for f in result.outputs] == [("outputs/big.bin", 1024 * 1024)]
    assert report["RLIMIT_DATA"] == 200 * 1024 * 1024
    assert report["RLIMIT_NOFILE"] == 16
    assert report["RLIMIT_FSIZE"] == 1024 * 1024
    assert report["RLIMIT_CORE"] == 0
    # bubblewrap's reaper counts in the sandbox's user namespace too (its monitor is outside);
    # the namespaces launcher's monitor and reaper both do.
    helpers = {"bubblewrap": 1, "namespaces": 2}.get(result.isolation, 0)
    assert report["RLIMIT_NPROC"] == 20 + helpers


async def test_cancel_before_the_execution_arrives(make_client: MakeClient) -> None:
    client = await make_client()
    cancel = await client.delete("/execute", headers=AUTH)
    assert cancel.json() == {"cancelled": True, "status": "done"}
    result = await _run(client, {"script": "run.py"}, {"run.py": "print('never')"})
    assert result.cancelled
    assert result.exit_code is None
    assert result.stdout == ""
    second = await client.post(
        "/execute",
        headers=AUTH,
        **execute_form({"script": "run.py"}, make_package({"run.py": "1"})),
    )
    assert second.status_code == 409


async def test_none_mode_runs_and_warns(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="sandbox_executor"):
        client = await make_client(ExecutorSettings(isolation="none"))
    assert "NOT a security boundary" in caplog.text
    assert (await client.get("/healthz")).json()["isolation"] == "none"
    script = (
        "import os\nprint(open('inputs/a.txt').read(), os.getcwd() == os.environ['HOME'])\n"
        "print(os.environ['TMPDIR'])\n"
    )
    result = await _run(client, {"script": "run.py"}, {"run.py": script}, inputs={"a.txt": b"in"})
    assert result.isolation == "none"
    assert result.exit_code == 0, result.stderr
    first, tmp = result.stdout.splitlines()
    assert first == "in True"
    # With no sandbox of its own the run's TMPDIR is a folder of its attempt.
    (attempt,) = _attempts(client)
    assert Path(tmp) == attempt / "tmp"
    # The small streams are in memory.
    assert sorted(p.name for p in attempt.iterdir()) == ["tmp", "workspace"]


async def test_missing_bubblewrap_falls_back_to_namespaces_or_refuses_to_start(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="sandbox_executor"):
        client = await make_client(ExecutorSettings(bwrap_path="no-such-bwrap-here"))
    assert (await client.get("/healthz")).json()["isolation"] == "namespaces"
    assert "'no-such-bwrap-here' not found" in caplog.text
    with pytest.raises(IsolationUnavailableError, match="install bubblewrap"):
        create_app(
            token=TOKEN,
            settings=ExecutorSettings(isolation="bubblewrap", bwrap_path="no-such-bwrap-here"),
        )


def test_check_request_accepts_ordinary_env_and_args() -> None:
    request = ExecutorRequest(
        script="scripts/run.py", args=["--x", "ü"], env={"API_KEY": "k", "_PRIVATE": "1"}
    )
    assert check_request(request) == ("scripts", "run.py")


def test_token_is_required(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="token"):
        create_app(token="", workdir=tmp_path)


async def test_a_prepared_environment_is_importable_and_read_only(
    make_client: MakeClient,
) -> None:
    """The skill's dependencies, prepared once by the manager, come with the request: Python
    imports them (PYTHONPATH), Node requires them (NODE_PATH), and the script cannot change
    them."""
    environment = make_environment(
        {
            "python/swdemo/__init__.py": "VALUE = 42\n",
            "node/node_modules/swnode/index.js": "module.exports = { value: 7 };\n",
        }
    )
    script = (
        "import os, swdemo\n"
        "print('python', swdemo.VALUE)\n"
        "try:\n"
        "    open(os.path.join(os.path.dirname(swdemo.__file__), 'x.py'), 'w')\n"
        "except OSError:\n"
        "    print('read-only')\n"
    )
    files = {
        "scripts/use.py": script,
        "scripts/use.js": "console.log('node', require('swnode').value);\n",
    }
    for name, expected in (
        ("scripts/use.py", "python 42\nread-only\n"),
        ("scripts/use.js", "node 7\n"),
    ):
        client = await make_client()
        response = await client.post(
            "/execute",
            headers=AUTH,
            **execute_form({"script": name}, make_package(files), environment=environment),
        )
        assert response.status_code == 200, response.text
        result = ExecutorResult.model_validate(response.json())
        assert (result.exit_code, result.stdout) == (0, expected), result.stderr

    # Without it, the same import fails: nothing else provides the package.
    client = await make_client()
    response = await client.post(
        "/execute", headers=AUTH, **execute_form({"script": "scripts/use.py"}, make_package(files))
    )
    result = ExecutorResult.model_validate(response.json())
    assert result.exit_code == 1
    assert "No module named 'swdemo'" in result.stderr


async def test_a_hostile_environment_is_refused_before_anything_runs(
    make_client: MakeClient,
) -> None:
    def escape(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("../outside.txt")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))

    def link(archive: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("python/evil")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        archive.addfile(info)

    for hostile in (
        make_environment({"python/ok.py": ""}, extra=escape),
        make_environment({"python/ok.py": ""}, extra=link),
        b"not a tarball",
    ):
        client = await make_client()
        response = await client.post(
            "/execute",
            headers=AUTH,
            **execute_form(
                {"script": "scripts/use.py"},
                make_package({"scripts/use.py": "print('ran')\n"}),
                environment=hostile,
            ),
        )
        assert response.status_code == 400, response.text
        assert "bad environment" in response.json()["detail"]


async def test_with_a_cache_an_environment_is_unpacked_once_and_hard_linked(
    make_client: MakeClient, tmp_path: Path
) -> None:
    """Executors of one host share a cache: the first unpacks an environment there (by its
    sha256), every run links it into its workspace (the file's link count shows it), and an
    environment whose bytes do not match its announced sha256 is refused."""
    environment = make_environment({"python/swdemo/__init__.py": "VALUE = 42\n"})
    digest = hashlib.sha256(environment).hexdigest()
    cache = tmp_path / "cache"
    script = "import os, swdemo\nprint(swdemo.VALUE, os.stat(swdemo.__file__).st_nlink)\n"
    package = make_package({"scripts/use.py": script})
    request = {"script": "scripts/use.py", "environment_sha256": digest}
    for _ in range(2):
        client = await make_client(ExecutorSettings(environment_cache=cache))
        response = await client.post(
            "/execute", headers=AUTH, **execute_form(request, package, environment=environment)
        )
        assert response.status_code == 200, response.text
        result = ExecutorResult.model_validate(response.json())
        value, links = result.stdout.split()
        assert value == "42", result.stderr
        assert int(links) >= 2  # the cache's inode, linked (earlier workspaces may hold more)
    assert [p.name for p in cache.iterdir()] == [digest]  # one copy, no leftovers

    client = await make_client(ExecutorSettings(environment_cache=cache))
    other = make_environment({"python/swdemo/__init__.py": "VALUE = 7\n"})
    response = await client.post(
        "/execute",
        headers=AUTH,
        **execute_form(
            {"script": "scripts/use.py", "environment_sha256": "0" * 64}, package, environment=other
        ),
    )
    assert response.status_code == 400
    assert "sha256" in response.json()["detail"]
