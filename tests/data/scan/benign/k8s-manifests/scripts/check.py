import sys

import yaml

for path in sys.argv[1:]:
    for doc in yaml.safe_load_all(open(path, encoding="utf-8")):
        if not doc or doc.get("kind") != "Deployment":
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            if "resources" not in container:
                print(f"{path}: {container['name']} has no resource limits")
            if "readinessProbe" not in container:
                print(f"{path}: {container['name']} has no readiness probe")
