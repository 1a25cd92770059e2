"""Lazy-Skills entry point: --help-json prints the tool schema, --run-json ARGS runs it."""

import json
import pathlib
import sys
from html.parser import HTMLParser

SCHEMA = {
    "name": "web_scraper",
    "description": "Extract the title and the links (href) of an HTML page.",
    "input_schema": {
        "type": "object",
        "properties": {
            "html": {"type": "string", "description": "The page's HTML."},
            "max_links": {"type": "integer", "minimum": 1, "default": 50},
        },
        "required": ["html"],
        "additionalProperties": False,
    },
}


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.links: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self._in_title = True
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.links.append(href)

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def main() -> int:
    if sys.argv[1:2] == ["--help-json"]:
        print(json.dumps(SCHEMA))
        return 0
    if sys.argv[1:2] != ["--run-json"] or len(sys.argv) != 3:
        print("usage: execute.py --help-json | --run-json ARGS", file=sys.stderr)
        return 2
    args = json.loads(sys.argv[2])
    page = Page()
    page.feed(args["html"])
    found = {"title": page.title.strip(), "links": page.links[: args.get("max_links", 50)]}
    pathlib.Path("outputs").mkdir(exist_ok=True)
    pathlib.Path("outputs/links.json").write_text(json.dumps(found, indent=2))
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
