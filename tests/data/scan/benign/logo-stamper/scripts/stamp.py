import base64
import re
import sys
from pathlib import Path

reference = Path(__file__).parent.parent / "references" / "logo.md"
encoded = re.search(r"base64,([A-Za-z0-9+/=]+)", reference.read_text()).group(1)
Path("outputs").mkdir(exist_ok=True)
Path("outputs/logo.png").write_bytes(base64.b64decode(encoded))
html = Path(sys.argv[1]).read_text().replace("{{logo}}", "logo.png")
Path("outputs/cover.html").write_text(html)
