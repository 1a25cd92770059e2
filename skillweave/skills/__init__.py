"""The Agent Skills format and everything about a skill library.

Parsing and validating ``SKILL.md`` (strict and lenient), discovering libraries (bounded,
cached, with precedence between roots), skill trees, versions, the tier-1 catalog, activation
payloads, resource reads, ZIP packages, tool schemas of executable skills, skill selection
(keyword, BM25, embeddings, hybrid) and the package dependencies a skill declares.
Imports nothing above ``skillweave.config``.
"""

from typing import TYPE_CHECKING

from skillweave.lazy import lazy_exports

if TYPE_CHECKING:
    from skillweave.skills.catalog import CATALOG_PREAMBLE, Catalog, build_catalog, render_catalog
    from skillweave.skills.dependencies import DependencySpec, discover_dependencies
    from skillweave.skills.discovery import HIDDEN_SKILLS_FIELD, ScanResult, SkillScanner
    from skillweave.skills.frontmatter import Frontmatter, parse_frontmatter
    from skillweave.skills.library import SkillLibrary
    from skillweave.skills.loader import LoadedSkill, load_skill_file
    from skillweave.skills.model import SKILL_TYPES, Skill, SkillType
    from skillweave.skills.names import UPLOADED_ROOT_MARKER, SkillOwner, name_key
    from skillweave.skills.package import (
        PackageLimits,
        build_package,
        extract_package,
        write_package,
    )
    from skillweave.skills.registry import SkillRegistry
    from skillweave.skills.relevance import RelevanceIndex, SearchHit, skill_document
    from skillweave.skills.resources import list_resources, read_resource, render_activation
    from skillweave.skills.spec import Diagnostic, check_frontmatter, name_problems
    from skillweave.skills.tools import ToolSchema, declared_tool_scripts, parse_tool_schemas
    from skillweave.skills.validation import ValidationReport, validate_paths
    from skillweave.skills.versioning import package_version, skill_version

# Public names resolve on first use (PEP 562): importing one module of this package, as a
# sandbox executor does for `package`, must not import BM25, numpy and jsonschema with it.
_EXPORTS: dict[str, str] = {
    "CATALOG_PREAMBLE": "catalog",
    "Catalog": "catalog",
    "DependencySpec": "dependencies",
    "Diagnostic": "spec",
    "Frontmatter": "frontmatter",
    "HIDDEN_SKILLS_FIELD": "discovery",
    "LoadedSkill": "loader",
    "PackageLimits": "package",
    "RelevanceIndex": "relevance",
    "SKILL_TYPES": "model",
    "ScanResult": "discovery",
    "SearchHit": "relevance",
    "Skill": "model",
    "SkillLibrary": "library",
    "SkillRegistry": "registry",
    "SkillOwner": "names",
    "SkillScanner": "discovery",
    "SkillType": "model",
    "ToolSchema": "tools",
    "UPLOADED_ROOT_MARKER": "names",
    "ValidationReport": "validation",
    "build_catalog": "catalog",
    "build_package": "package",
    "check_frontmatter": "spec",
    "declared_tool_scripts": "tools",
    "discover_dependencies": "dependencies",
    "extract_package": "package",
    "list_resources": "resources",
    "load_skill_file": "loader",
    "name_key": "names",
    "name_problems": "spec",
    "package_version": "versioning",
    "parse_frontmatter": "frontmatter",
    "parse_tool_schemas": "tools",
    "read_resource": "resources",
    "render_activation": "resources",
    "render_catalog": "catalog",
    "skill_document": "relevance",
    "skill_version": "versioning",
    "validate_paths": "validation",
    "write_package": "package",
}

__all__ = [
    "CATALOG_PREAMBLE",
    "HIDDEN_SKILLS_FIELD",
    "SKILL_TYPES",
    "UPLOADED_ROOT_MARKER",
    "Catalog",
    "DependencySpec",
    "Diagnostic",
    "Frontmatter",
    "LoadedSkill",
    "PackageLimits",
    "RelevanceIndex",
    "ScanResult",
    "SearchHit",
    "Skill",
    "SkillLibrary",
    "SkillOwner",
    "SkillRegistry",
    "SkillScanner",
    "SkillType",
    "ToolSchema",
    "ValidationReport",
    "build_catalog",
    "build_package",
    "check_frontmatter",
    "declared_tool_scripts",
    "discover_dependencies",
    "extract_package",
    "list_resources",
    "load_skill_file",
    "name_key",
    "name_problems",
    "package_version",
    "parse_frontmatter",
    "parse_tool_schemas",
    "read_resource",
    "render_activation",
    "render_catalog",
    "skill_document",
    "skill_version",
    "validate_paths",
    "write_package",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
