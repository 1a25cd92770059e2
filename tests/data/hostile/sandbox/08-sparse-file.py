import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

with open("outputs/sparse.bin", "wb") as file:
    file.truncate(641 * 1024 * 1024)
report(False, "made a sparse file (its run must keep no outputs)")
