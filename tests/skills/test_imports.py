"""Inferring the packages a skill's scripts import and do not declare (issue 25)."""

from __future__ import annotations

import pytest

from skillweave.errors import DependencyError
from skillweave.skills.dependencies import (
    DependencySpec,
    base_environment,
    dependency_lines,
    discover_dependencies,
)
from skillweave.skills.imports import infer_imports

SCRIPT = b"""
import json, sys
import pypdf
from openpyxl import Workbook
from PIL import Image
import yaml, cv2, fitz, sklearn.linear_model, bs4, docx, pptx
from google.protobuf import message
import google
import helpers
from . import sibling
from .pkg import thing
try:
    import ujson
except ImportError:
    ujson = None
try:
    import orjson
except (ValueError, ModuleNotFoundError):
    orjson = None
if TYPE_CHECKING:
    import pandas
def later():
    import requests
"""


def test_python_imports_name_their_distributions_and_skip_what_is_not_to_install() -> None:
    found = infer_imports(
        {
            "scripts/run.py": SCRIPT,
            "scripts/helpers.py": b"",
            "scripts/broken.py": b"import (\n",  # does not parse: nothing from it
            "execute.py": b"import numpy as np\nimport scripts\n",
        }
    )
    assert list(found.python) == [
        "numpy",
        "pypdf",
        "openpyxl",
        "pillow",
        "pyyaml",
        "opencv-python-headless",
        "pymupdf",
        "scikit-learn",
        "beautifulsoup4",
        "python-docx",
        "python-pptx",
        "protobuf",
        "requests",
    ]
    assert found.python["pypdf"] == "scripts/run.py"
    assert found.python["numpy"] == "execute.py"
    assert found.node == {}


def test_node_requires_and_imports_name_their_packages() -> None:
    source = b"""
    const _ = require('lodash/fp');
    const fs = require("fs"), p = require('node:path');
    import { S3Client } from '@aws-sdk/client-s3/dist';
    import './local.js';
    import chalk from "chalk";
    export { x } from '../up.mjs';
    const later = await import('pdf-lib');
    """
    assert infer_imports({"scripts/a.mjs": source}).node == {
        "lodash": "scripts/a.mjs",
        "@aws-sdk/client-s3": "scripts/a.mjs",
        "chalk": "scripts/a.mjs",
        "pdf-lib": "scripts/a.mjs",
    }


def test_inferred_packages_join_the_declared_ones_marked() -> None:
    files = {
        "requirements.txt": b"pypdf>=4\n",
        "package.json": b'{"dependencies": {"chalk": "^5"}}',
        "scripts/a.py": b"import pypdf\nimport openpyxl\n",
        "scripts/b.js": b"require('chalk'); require('pdf-lib')",
    }
    assert discover_dependencies(files).inferred == ()  # off unless asked
    spec = discover_dependencies(files, infer=True)
    assert spec.python == ("openpyxl", "pypdf>=4")  # the declared requirement wins
    assert spec.node == (("chalk", "^5"), ("pdf-lib", "*"))
    assert spec.inferred == ("openpyxl", "pdf-lib")
    assert "scripts/a.py (imports)" in spec.sources
    assert spec.declared() == discover_dependencies(files)
    assert dependency_lines(spec) == [
        "python openpyxl (inferred from the scripts' imports)",
        "python pypdf>=4",
        "node chalk@^5",
        "node pdf-lib@* (inferred from the scripts' imports)",
    ]
    assert DependencySpec.from_json(spec.to_json()) == spec


def test_the_base_environment_joins_what_a_skill_does_not_have() -> None:
    base = base_environment(["swdemo==1.0", "pypdf<5"], {"chalk": "^5"})
    own = discover_dependencies({"requirements.txt": b"pypdf>=4.2\n"})
    merged = own.with_base(base)
    assert merged.python == ("pypdf>=4.2", "swdemo==1.0")  # the skill's own pypdf wins
    assert merged.node == (("chalk", "^5"),)
    assert merged.sources[-1] == "base environment"
    assert merged.digest() != own.digest()
    assert DependencySpec().with_base(base).python == base.python
    assert own.with_base(DependencySpec()) is own
    with pytest.raises(DependencyError, match=r"base_python\[0\]"):
        base_environment(["not a requirement!"], {})


def test_a_script_built_to_exhaust_the_parser_infers_nothing_and_breaks_nothing() -> None:
    deep = b"x = " + b"(" * 100_000 + b")" * 100_000 + b"\nimport pypdf\n"
    found = infer_imports({"scripts/deep.py": deep, "scripts/ok.py": b"import openpyxl\n"})
    assert list(found.python) == ["openpyxl"]
