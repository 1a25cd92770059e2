"""What the registry tests share: a library of skills on disk, a key, settings over them."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from skillweave.config import SkillsSettings
from skillweave.skills.signing import public_key_b64
from tests.conftest import write_skill

SKILLS = {
    "unit-converter": "Convert units of length, mass and temperature between metric and imperial.",
    "pdf-forms": "Fill in PDF forms and extract their fields.",
    "csv-report": "Summarise a CSV file into a short report with totals per column.",
}


def library(root: Path) -> Path:
    """A folder of three skills (scripts-free, clean under the scanner)."""
    for name, description in SKILLS.items():
        write_skill(root / name, description=description)
    return root


def settings(tmp_path: Path, *registries: object, **more: object) -> SkillsSettings:
    """Skills settings with `registries`, a cache of the test's own, bm25 selection."""
    return SkillsSettings.model_validate(
        {
            "registries": list(registries),
            "registry_cache_dir": tmp_path / "cache",
            "selection": "bm25",
            **more,
        }
    )


def trusting(key: Ed25519PrivateKey, key_id: str = "ops") -> dict[str, object]:
    """``skills.trust`` trusting `key` as `key_id`."""
    return {"keys": {key_id: public_key_b64(key)}}
