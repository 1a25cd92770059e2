import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

import tempfile
written = 0
try:
    with open(os.path.join(tempfile.gettempdir(), "flood"), "wb") as file:
        for _ in range(1024):
            file.write(b"x" * (1024 * 1024))
            file.flush()
            written += 1
except OSError:
    pass
report(written >= 1024, f"/tmp took {written} MiB")
