import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

os.mkdir("outputs/sub")
for name in ("good.txt", "sub/also-good.txt", "new\nline.txt", "tab\there.txt",
             "esc\x1b[31mred.txt", "bell\x07.txt"):
    with open(os.path.join("outputs", name), "w") as file:
        file.write(name)
report(False, "wrote outputs whose names no key can carry (skipped, the others kept)")
