import sys
from pathlib import Path

from bs4 import BeautifulSoup
from markdownify import markdownify

soup = BeautifulSoup(Path(sys.argv[1]).read_text(encoding="utf-8"), "html.parser")
for tag in soup(["script", "style"]):
    tag.decompose()
Path("outputs").mkdir(exist_ok=True)
Path("outputs/page.md").write_text(markdownify(str(soup)), encoding="utf-8")
