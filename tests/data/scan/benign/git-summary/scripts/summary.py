import collections
import subprocess
import sys

repo = sys.argv[1]
log = subprocess.run(
    ["git", "-C", repo, "log", "--since=30.days", "--pretty=format:%an|%ad", "--date=short"],
    capture_output=True, text=True, check=True,
).stdout
authors = collections.Counter(line.split("|")[0] for line in log.splitlines())
for author, count in authors.most_common(10):
    print(f"{count:4d} {author}")
