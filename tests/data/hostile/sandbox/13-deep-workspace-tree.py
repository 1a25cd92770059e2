import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

with open("outputs/kept.txt", "w") as file:
    file.write("kept\n")
os.mkdir(sys.argv[1])
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for level in range(3000):
    os.mkdir("d" * 100, dir_fd=fd)
    os.symlink("/", "root", dir_fd=fd)
    inner = os.open("d" * 100, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    if level % 500 == 499:
        os.fchmod(fd, 0)
    os.close(fd)
    fd = inner
os.close(fd)
report(False, "made 3,000 levels in its workspace (nothing of it may outlive the run)")
