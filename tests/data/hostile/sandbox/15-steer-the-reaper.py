import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

import signal, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
TRACE, READV, WRITEV = {"x86_64": (101, 310, 311), "aarch64": (117, 270, 271)}[os.uname().machine]
def opens(path, flags=os.O_RDONLY):
    try:
        return os.close(os.open(path, flags)) or True
    except OSError:
        return False
def let(result):  # EFAULT, EBADF...: it got past the permission check
    return result >= 0 or ctypes.get_errno() not in (errno.EPERM, errno.EACCES, errno.ESRCH)
for name, flags in (("mem", os.O_RDONLY), ("mem", os.O_RDWR), ("maps", 0), ("environ", 0),
                    ("fd", os.O_DIRECTORY), ("cwd", os.O_PATH), ("root", os.O_PATH)):
    report(opens(f"/proc/1/{name}", flags), f"open /proc/1/{name} ({flags})")
for maps in ("/proc/1/maps", "/proc/self/maps"):  # an address pid 1 maps, if it can be read
    if opens(maps):
        with open(maps) as file:
            address = int(file.readline().split("-")[0], 16)
        break
try:
    fd = os.open("/proc/1/mem", os.O_RDONLY)
    os.lseek(fd, address, os.SEEK_SET)
    report(bool(os.read(fd, 16)), "lseek+read of pid 1's memory")
except OSError:
    report(False, "lseek+read of pid 1's memory")
report(any(opens(f"/proc/1/fd/{n}") for n in range(32)), "reopen pid 1's descriptors")
pidfd = os.pidfd_open(1)  # allowed: a pidfd only tells pid 1's exit or signals it
report(any(let(libc.syscall(438, pidfd, n, 0)) for n in range(32)), "pidfd_getfd from pid 1")
buffer = ctypes.create_string_buffer(16)
local = (ctypes.c_void_p * 2)(ctypes.addressof(buffer), 16)
remote = (ctypes.c_void_p * 2)(address, 16)
for number in (READV, WRITEV):
    report(let(libc.syscall(number, 1, local, 1, remote, 1, 0)), f"process_vm_*v ({number})")
for request in (16, 0x4206):  # PTRACE_ATTACH, PTRACE_SEIZE
    report(let(libc.syscall(TRACE, request, 1, 0, 0)), f"ptrace({request:#x}) of pid 1")
for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGSTOP):
    try:
        os.kill(1, number)
    except OSError:
        pass
time.sleep(0.2)
with open("/proc/1/stat") as file:
    state = file.read().rsplit(")", 1)[1].split()[0]
report(state not in ("S", "R"), f"pid 1 after SIGINT, SIGTERM, SIGSTOP: state {state}")
