import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

libc = ctypes.CDLL(None, use_errno=True)
numbers = {"x86_64": {"keyctl": 250, "io_uring_setup": 425, "mount": 165, "bpf": 321,
                      "perf_event_open": 298, "ptrace": 101},
           "aarch64": {"keyctl": 219, "io_uring_setup": 425, "mount": 40, "bpf": 280,
                       "perf_event_open": 241, "ptrace": 117}}[os.uname().machine]
for name, number in numbers.items():
    report(libc.syscall(number, 16, 0, 0, 0, 0) >= 0, name)
report(libc.unshare(0x10000000) == 0, "unshare(CLONE_NEWUSER)")
try:
    socket.socket(40, socket.SOCK_STREAM).close()
    report(True, "AF_VSOCK")
except OSError:
    report(False, "AF_VSOCK")
