import sys
from pathlib import Path

from PIL import Image, UnidentifiedImageError

size = int(sys.argv[1]) if len(sys.argv) > 1 else 256
out = Path("outputs/thumbs")
out.mkdir(parents=True, exist_ok=True)
for path in Path("inputs").iterdir():
    try:
        with Image.open(path) as image:
            image.thumbnail((size, size))
            image.save(out / f"{path.stem}.png")
    except UnidentifiedImageError:
        continue
