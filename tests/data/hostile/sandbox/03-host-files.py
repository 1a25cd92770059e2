import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

for path in (sys.argv[1], "/etc/shadow", "/root", "/home"):
    report(os.path.exists(path), f"host path {path}")
