import hashlib
import sys

EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

for line in open(sys.argv[1], encoding="utf-8"):
    digest, name = line.split(maxsplit=1)
    actual = hashlib.sha256(open(name.strip(), "rb").read()).hexdigest()
    status = "OK" if actual == digest else "FAILED"
    if actual == EMPTY:
        status += " (empty file)"
    print(f"{name.strip()}: {status}")
