import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

with open("outputs/kept.txt", "w") as file:
    file.write("kept\n")
os.mkdir(os.path.join("outputs", sys.argv[1]))
fd = os.open(os.path.join("outputs", sys.argv[1]), os.O_RDONLY | os.O_DIRECTORY)
for _ in range(1500):
    os.mkdir("d", dir_fd=fd)
    inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    fd = inner
os.close(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
os.close(fd)
report(False, "made 1,500 levels under outputs/ (the run must end once, kept.txt kept)")
