import sys
from xml.sax.saxutils import escape

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

label, value = (escape(a) for a in sys.argv[1:3])
width = 6 * (len(label) + len(value)) + 20
svg = (
    f'<svg xmlns="{SVG_NS}" xmlns:xlink="{XLINK_NS}" width="{width}" height="20">'
    f'<text x="5" y="14">{label}</text><text x="{width // 2 + 5}" y="14">{value}</text></svg>'
)
open("outputs/badge.svg", "w", encoding="utf-8").write(svg)
