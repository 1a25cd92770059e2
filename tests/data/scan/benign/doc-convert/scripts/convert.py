import os
import subprocess
import sys
from pathlib import Path

source, target_format = Path(sys.argv[1]), sys.argv[2]
output = Path("outputs") / f"{source.stem}.{target_format}"
output.parent.mkdir(exist_ok=True)
env = {**os.environ, "LC_ALL": "C.UTF-8"}
subprocess.run(["pandoc", str(source), "-o", str(output)], check=True, env=env)
print(output)
