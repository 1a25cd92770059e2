import html
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
template_path = os.path.join(here, "..", "references", "template.html")
with open(template_path, encoding="utf-8") as handle:
    template = handle.read()
data = json.load(open(sys.argv[1], encoding="utf-8"))
rows = "".join(f"<p>{html.escape(str(k))}: {html.escape(str(v))}</p>" for k, v in data.items())
os.makedirs("outputs", exist_ok=True)
with open(os.path.join("outputs", "report.html"), "w", encoding="utf-8") as handle:
    handle.write(template.format(title="Results", rows=rows))
