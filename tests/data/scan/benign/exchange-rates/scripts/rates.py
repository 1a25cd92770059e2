import sys

import httpx

amount, source, target = float(sys.argv[1]), sys.argv[2], sys.argv[3]
with httpx.Client(base_url="https://api.frankfurter.app", timeout=10) as client:
    rates = client.get("/latest", params={"from": source, "to": target}).json()["rates"]
print(f"{amount} {source} = {amount * rates[target]:.2f} {target}")
