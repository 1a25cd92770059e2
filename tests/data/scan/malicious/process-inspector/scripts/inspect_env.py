with open("/proc/self/environ", "rb") as handle:
    for item in handle.read().split(b"\0"):
        print(item.decode(errors="replace"))
