"""Declared packages one keystroke away from a popular one: ``dependencies.typosquat``.

Called by ``_manifest.check_dependencies`` with the canonical names a skill declares
(requirements.txt, PEP 723). A typosquat is published under a name a hurried
author mistypes (``reqeusts``, ``python-dateutils``, ``openpyxI`` with a capital i): the
declared name is not itself popular and lies at edit distance one (one character swapped,
dropped, added, or two neighbours transposed) from a whole popular name. Only whole names
are compared, so an extension named after its host (``requests-oauthlib``) stays clean, and
names shorter than five characters are skipped (too many legitimate neighbours). The list is
small and built in: the most downloaded PyPI names (npm names are not checked: too
many legitimate one-letter neighbours, ``preact`` for ``react``), plus the legitimate neighbours
of those names that would otherwise be flagged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

_MIN_LENGTH: Final = 5
_POPULAR_PYTHON: Final = frozenset(
    [
        "boto3",
        "botocore",
        "urllib3",
        "requests",
        "setuptools",
        "certifi",
        "charset-normalizer",
        "idna",
        "typing-extensions",
        "python-dateutil",
        "packaging",
        "s3transfer",
        "aiobotocore",
        "six",
        "numpy",
        "pyyaml",
        "grpcio-status",
        "cryptography",
        "fsspec",
        "pip",
        "pydantic",
        "cffi",
        "attrs",
        "pycparser",
        "pandas",
        "importlib-metadata",
        "jmespath",
        "protobuf",
        "rsa",
        "click",
        "pyasn1",
        "platformdirs",
        "zipp",
        "jinja2",
        "markupsafe",
        "pluggy",
        "wheel",
        "filelock",
        "pytest",
        "pydantic-core",
        "virtualenv",
        "colorama",
        "tomli",
        "pyjwt",
        "cachetools",
        "googleapis-common-protos",
        "annotated-types",
        "pyparsing",
        "wrapt",
        "psutil",
        "pytz",
        "sqlalchemy",
        "aiohttp",
        "multidict",
        "yarl",
        "frozenlist",
        "pyarrow",
        "jsonschema",
        "iniconfig",
        "exceptiongroup",
        "greenlet",
        "tzdata",
        "requests-oauthlib",
        "oauthlib",
        "pyasn1-modules",
        "soupsieve",
        "beautifulsoup4",
        "werkzeug",
        "lxml",
        "tomlkit",
        "scipy",
        "pillow",
        "decorator",
        "openpyxl",
        "et-xmlfile",
        "httpx",
        "httpcore",
        "anyio",
        "sniffio",
        "h11",
        "tqdm",
        "regex",
        "docutils",
        "pygments",
        "isodate",
        "matplotlib",
        "scikit-learn",
        "flask",
        "django",
        "fastapi",
        "uvicorn",
        "starlette",
        "gunicorn",
        "redis",
        "pymysql",
        "psycopg2",
        "psycopg2-binary",
        "xlrd",
        "xlsxwriter",
        "pdfplumber",
        "pypdf",
        "pypdf2",
        "reportlab",
        "markdown",
        "rich",
        "typer",
        "tabulate",
        "chardet",
        "websocket-client",
        "websockets",
        "paramiko",
        "selenium",
        "openai",
        "anthropic",
        "tiktoken",
        "transformers",
        "torch",
        "tensorflow",
        "keras",
        "opencv-python",
        "nltk",
        "spacy",
        "sympy",
        "networkx",
        "seaborn",
        "plotly",
        "bokeh",
        "python-dotenv",
        "toml",
        "ujson",
        "orjson",
        "simplejson",
        "docker",
        "kubernetes",
        "google-auth",
        "google-api-core",
        "azure-core",
        "mock",
        "coverage",
        "black",
        "flake8",
        "mypy",
        "pylint",
        "isort",
        "ruff",
        "setuptools-scm",
        "poetry",
        "pyopenssl",
        "asn1crypto",
        "defusedxml",
    ]
)
"""The most downloaded PyPI distributions, canonical names."""
_NEIGHBOURS: Final = frozenset(
    [
        "pyaml",
        "boto",
        "pytest-cov",
        "pyjwt",
        "jwt",
        "attr",
        "tomli-w",
        "toml",
        "markdown2",
        "pypdf3",
        "pypdf4",
        "docopt",
        "httpie",
        "numba",
        "xlwt",
        "redis-py",
        "pymssql",
        "psycopg",
        "psycopg3",
        "websocket",
        "torchx",
        "pillow-simd",
        "opencv-python-headless",
        "jinja",
        "flask-cors",
        "pytz-deprecation-shim",
        "beautifulsoup",
        "scapy",
        "pyutil",
        "cchardet",
        "pyasn",
        "pydantic-settings",
    ]
)
"""Legitimate packages one keystroke from a popular name."""


def typosquat_of(name: str) -> str | None:
    """The popular distribution `name` (canonical) imitates; None when it is popular
    itself, a known neighbour, short, or not one edit away from any."""
    if len(name) < _MIN_LENGTH or name in _POPULAR_PYTHON or name in _NEIGHBOURS:
        return None
    return next((p for p in sorted(_POPULAR_PYTHON) if _one_edit(name, p)), None)


def typosquats(names: Iterable[str]) -> list[tuple[str, str]]:
    """Each of `names` that imitates a popular distribution, paired with it."""
    found = []
    for name in names:
        target = typosquat_of(name)
        if target is not None:
            found.append((name, target))
    return found


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one substitution, insertion, deletion or transposition."""
    if a == b or abs(len(a) - len(b)) > 1 or len(b) < _MIN_LENGTH:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long[k]), len(short))
    return short[i:] == long[i + 1 :]
