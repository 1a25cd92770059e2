import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)

import base64
secret = os.environ["HOSTILE_KEY"]
raw = secret.encode()
base32 = base64.b32encode(raw).decode()
forms = [raw.hex(), raw.hex().upper(), base32, base32.rstrip("="), secret[::-1],
         secret.upper(), secret.lower()]
report(False, "prints the secret encoded (every form must be masked)")
print("\n".join(forms))
written = 0
for index, form in enumerate(forms):
    filler = "." * ((index + 1) * 256 * 1024 - written - len(form) // 2)
    sys.stderr.write(filler + form)
    written += len(filler) + len(form)
sys.stderr.write("\n")
