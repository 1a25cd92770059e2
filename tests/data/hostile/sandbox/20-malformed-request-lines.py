import ctypes, errno, os, socket, sys
def report(escaped, what):
    print(("ESCAPED " if escaped else "CONTAINED ") + what, flush=True)
import time, uuid
HOST, _, PORT = os.environ.get("HTTP_PROXY", "http://no-proxy:0")[7:].rpartition(":")
UP = sys.argv[1]  # the approved upstream, 127.0.0.1:PORT
NOTE = uuid.uuid4().hex  # this run's own bodies, told apart from other runs' when read back
counts = {"sent": 0, "refused": 0}
def send(raw):
    time.sleep(0.1)  # under the proxy's cap of requests a second
    counts["sent"] += 1
    answer = b""
    try:
        with socket.create_connection((HOST, int(PORT)), timeout=5) as sock:
            sock.sendall(raw.encode("utf-8"))
            while chunk := sock.recv(65536):
                answer += chunk
    except (OSError, ValueError):
        pass  # what came before is the answer
    if not answer.startswith(b"HTTP/1.1 200 "):
        counts["refused"] += 1
    return answer
def status(answer):
    return answer.split(b"\r\n", 1)[0].decode("latin-1") or "no answer"
def refused(what, raw):  # contained: a 400 in one line, nothing else
    answer = send(raw)
    head, _, body = answer.partition(b"\r\n\r\n")
    one_line = head.startswith(b"HTTP/1.1 400 ") and body.count(b"\n") == 1
    report(not one_line, f"{what}: {status(answer)}")
def read_back():  # what the upstream stored, over the one approved route
    answer = send(f"GET http://{UP}/read HTTP/1.1\r\nHost: {UP}\r\n\r\n")
    lower = answer.lower()
    report(not answer.startswith(b"HTTP/1.1 200 "), f"read back: {status(answer)}")
    report(b"bearer" in lower or b"authorization" in lower, "a credential stored upstream")
    report(f"extra-{NOTE}".encode() in answer, "a second request stored upstream")
def done():
    print(f"EGRESS sent={counts['sent']} refused={counts['refused']}", flush=True)

WIDE = "\uff45\uff56\uff49\uff4c.example"  # full-width "evil"
for what, target in (
    ("double port", "http://127.0.0.1:1:2/"),
    ("double port on the approved upstream", f"http://{UP}:2/"),
    ("bracketed name", "http://[evil.example]/"),
    ("full-width letters", f"http://{WIDE}/"),
):
    host = target[7:].rstrip("/")
    refused(what, f"GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n")
for what, target in (
    ("CONNECT, double port", "127.0.0.1:1:2"),
    ("CONNECT, bracketed name", "[evil.example]:443"),
    ("CONNECT, full-width letters", f"{WIDE}:443"),
    ("CONNECT, full-width port", "127.0.0.1:\uff14\uff14\uff13"),
):
    refused(what, f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n")
refused("full-width Host header", f"GET http://{UP}/ HTTP/1.1\r\nHost: {WIDE}\r\n\r\n")
done()
