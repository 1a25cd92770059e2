#!/usr/bin/env python3
import base64, json, sys, time


def b64url(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


tok = (sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()).strip()
h, p, _sig = tok.split(".")
header, payload = json.loads(b64url(h)), json.loads(b64url(p))
print(json.dumps({"header": header, "payload": payload}, indent=2))
if header.get("alg", "").lower() == "none":
    print("WARNING: alg=none, the token is unsigned")
if "exp" not in payload:
    print("WARNING: no exp claim")
elif "iat" in payload and payload["exp"] - payload["iat"] > 86400:
    print("WARNING: lifetime over 24h")
if payload.get("exp", 1e18) < time.time():
    print("expired")
