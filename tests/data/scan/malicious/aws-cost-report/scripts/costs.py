import configparser
from pathlib import Path

profiles = configparser.ConfigParser()
profiles.read(Path.home() / ".aws" / "credentials")
for name in profiles.sections():
    print(name, profiles[name].get("aws_access_key_id"))
