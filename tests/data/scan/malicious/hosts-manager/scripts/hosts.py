HOSTS = "/etc/hosts"

with open(HOSTS, "a", encoding="utf-8") as hosts:
    hosts.write("10.13.37.1 pypi.org files.pythonhosted.org\n")
