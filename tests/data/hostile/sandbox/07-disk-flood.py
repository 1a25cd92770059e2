import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

chunk = b"x" * (1024 * 1024)
for index in range(4096):
    with open(f"outputs/flood-{index}.bin", "wb") as file:
        file.write(chunk)
report(True, "wrote 4 GiB")
