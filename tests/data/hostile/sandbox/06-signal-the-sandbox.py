import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

import signal
for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
report(False, "still running after signalling everything")
