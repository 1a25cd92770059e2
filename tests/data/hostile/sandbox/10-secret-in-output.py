import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

import base64
secret = os.environ["HOSTILE_KEY"]
filler = "." * 300_000
report(False, "prints the secret (every copy must be masked)")
for stream in (sys.stdout, sys.stderr):
    stream.write(secret + "\n" + base64.b64encode(secret.encode()).decode() + "\n")
    stream.write(filler + secret + filler + "\n")
