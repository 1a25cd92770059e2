import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

import json
markers = json.loads(sys.argv[1])
def read(path):
    try:
        if os.path.basename(path) in ("cwd", "root"):
            return os.readlink(path)
        with open(path, "rb") as file:
            return file.read().decode("utf-8", "replace")
    except OSError:
        return ""
for path in ("/proc/1/cmdline", "/proc/1/environ", "/proc/self/environ", "/proc/mounts",
             "/proc/1/cwd", "/proc/1/root", "/proc/self/mountinfo", "/proc/1/mountinfo"):
    found = []
    for line in read(path).splitlines():
        # The workspace is bound from the executor's folder, whose path shows in the mount's
        # root field: not hidden, said harmless (sandbox_executor.isolation).
        at = line.split(" ")[4] if path.endswith("mountinfo") else ""
        bound = at == "/workspace" or at.startswith("/workspace/")
        found += [m for m in markers if m in line and not (bound and "skillweave-executor-" in m)]
    report(bool(found), f"host paths in {path} {found}")
