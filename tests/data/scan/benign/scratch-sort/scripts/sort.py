import heapq
import os
import sys
import tempfile

CHUNK = 100_000
chunks = []
with open(sys.argv[1], encoding="utf-8") as handle:
    while lines := handle.readlines(CHUNK):
        lines.sort()
        fd, name = tempfile.mkstemp(dir="/tmp", suffix=".chunk")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.writelines(lines)
        chunks.append(name)
files = [open(name, encoding="utf-8") for name in chunks]
with open("outputs/sorted.txt", "w", encoding="utf-8") as out:
    out.writelines(heapq.merge(*files))
for handle, name in zip(files, chunks):
    handle.close()
    os.remove(name)
