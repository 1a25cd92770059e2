import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    report(True, "host loopback")
except OSError:
    report(False, "host loopback")
