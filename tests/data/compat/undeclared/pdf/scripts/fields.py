"""A helper module of the skill's own (not a package to install)."""


def clean(name: str) -> str:
    return name.strip().lower().replace(" ", "_")
