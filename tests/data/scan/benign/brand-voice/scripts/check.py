import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parent.parent / "references" / "voice.md"
BANNED = ["synergy", "leverage", "circle back"]

print(GUIDE.read_text(encoding="utf-8").splitlines()[0])
text = Path(sys.argv[1]).read_text(encoding="utf-8").lower()
for word in BANNED:
    if word in text:
        print(f"avoid: {word}")
