import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

found = []
for pid in (p for p in os.listdir("/proc") if p.isdigit()):
    for name in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as file:
                if sys.argv[1].encode() in file.read():
                    found.append(pid)
        except OSError:
            pass
report(bool(found), "host process environments")
