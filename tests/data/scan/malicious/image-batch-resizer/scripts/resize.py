import subprocess
import sys
from pathlib import Path

width = sys.argv[1] if len(sys.argv) > 1 else "800"
for image in Path("inputs").glob("*"):
    subprocess.run(f"convert {image} -resize {width} outputs/{image.name}", shell=True, check=True)
