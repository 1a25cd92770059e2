import json
import shutil
import subprocess
import sys

ffprobe = shutil.which("ffprobe") or "ffprobe"
result = subprocess.run(
    [ffprobe, "-v", "quiet", "-print_format", "json", "-show_format", "-show_streams", sys.argv[1]],
    capture_output=True, check=True,
)
info = json.loads(result.stdout)
print(info["format"]["duration"], [s["codec_name"] for s in info["streams"]])
