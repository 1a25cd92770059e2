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
    from skillweave.skills.admission import Admissions, activation_trust
    from skillweave.skills.allowed_tools import skill_allowance
    from skillweave.skills.catalog import (
        CATALOG_PREAMBLE,
        Catalog,
        build_catalog,
        render_catalog,
        render_entries,
    )
    from skillweave.skills.dependencies import DependencySpec, discover_dependencies
    from skillweave.skills.discovery import HIDDEN_SKILLS_FIELD, ScanResult, SkillScanner
    from skillweave.skills.drafts import Draft, build_draft
    from skillweave.skills.files import SKILL_FILE, remove_tree
    from skillweave.skills.frontmatter import (
        Frontmatter,
        parse_frontmatter,
        with_frontmatter_fields,
    )
    from skillweave.skills.library import (
        LibraryEntry,
        SkillLibrary,
        SkillState,
        configured_roots,
        owned_folder,
        package_limits,
        process_folder,
    )
    from skillweave.skills.loader import LoadedSkill, load_skill_file
    from skillweave.skills.model import SKILL_TYPES, Skill, SkillType
    from skillweave.skills.names import (
        NOT_BOUND,
        SKILL_ID_PATTERN,
        SKILL_REFERENCE_PATTERN,
        UPLOADED_ROOT_MARKER,
        SkillOwner,
        SkillPin,
        SkillVersionError,
        bound_name,
        canonical_form,
        is_scope,
        name_key,
        parse_pin,
        skill_id,
    )
    from skillweave.skills.network import (
        PORT_DIGITS,
        Destination,
        declared_destinations,
        parse_destination,
        valid_host,
    )
    from skillweave.skills.package import (
        DEFAULT_MAX_BYTES,
        PackageLimits,
        archive_version,
        build_package,
        extract_package,
        package_file,
        write_package,
    )
    from skillweave.skills.registry import SkillRegistry
    from skillweave.skills.relevance import RelevanceIndex, SearchHit, skill_document
    from skillweave.skills.reload import reloading
    from skillweave.skills.resources import (
        largest_read,
        list_resources,
        read_resource,
        render_activation,
    )
    from skillweave.skills.scan_decision import (
        ScanDecision,
        evidence,
        finding_line,
        review_line,
        stored_report,
        worst_first,
    )
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
    "package_file": "package",
    "largest_read": "resources",
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
    "Admissions": "admission",
    "DEFAULT_MAX_BYTES": "package",
    "Destination": "network",
    "Draft": "drafts",
    "LibraryEntry": "library",
    "NOT_BOUND": "names",
    "PORT_DIGITS": "network",
    "SKILL_FILE": "files",
    "SKILL_ID_PATTERN": "names",
    "SKILL_REFERENCE_PATTERN": "names",
    "SkillState": "library",
    "activation_trust": "admission",
    "archive_version": "package",
    "bound_name": "names",
    "build_draft": "drafts",
    "canonical_form": "names",
    "configured_roots": "library",
    "declared_destinations": "network",
    "is_scope": "names",
    "owned_folder": "library",
    "package_limits": "library",
    "parse_destination": "network",
    "process_folder": "library",
    "reloading": "reload",
    "remove_tree": "files",
    "render_entries": "catalog",
    "skill_allowance": "allowed_tools",
    "skill_id": "names",
    "SkillPin": "names",
    "SkillVersionError": "names",
    "parse_pin": "names",
    "valid_host": "network",
    "with_frontmatter_fields": "frontmatter",
    "ScanDecision": "scan_decision",
    "evidence": "scan_decision",
    "finding_line": "scan_decision",
    "review_line": "scan_decision",
    "stored_report": "scan_decision",
    "worst_first": "scan_decision",
}

__all__ = [
    "CATALOG_PREAMBLE",
    "DEFAULT_MAX_BYTES",
    "HIDDEN_SKILLS_FIELD",
    "NOT_BOUND",
    "PORT_DIGITS",
    "SKILL_FILE",
    "SKILL_ID_PATTERN",
    "SKILL_REFERENCE_PATTERN",
    "SKILL_TYPES",
    "UPLOADED_ROOT_MARKER",
    "Admissions",
    "Catalog",
    "DependencySpec",
    "Destination",
    "Diagnostic",
    "Draft",
    "Frontmatter",
    "LibraryEntry",
    "LoadedSkill",
    "PackageLimits",
    "RelevanceIndex",
    "ScanDecision",
    "ScanResult",
    "SearchHit",
    "Skill",
    "SkillLibrary",
    "SkillOwner",
    "SkillPin",
    "SkillRegistry",
    "SkillScanner",
    "SkillState",
    "SkillType",
    "SkillVersionError",
    "ToolSchema",
    "ValidationReport",
    "activation_trust",
    "archive_version",
    "bound_name",
    "build_catalog",
    "build_draft",
    "build_package",
    "canonical_form",
    "check_frontmatter",
    "configured_roots",
    "declared_destinations",
    "declared_tool_scripts",
    "discover_dependencies",
    "evidence",
    "extract_package",
    "finding_line",
    "is_scope",
    "largest_read",
    "list_resources",
    "load_skill_file",
    "name_key",
    "name_problems",
    "owned_folder",
    "package_file",
    "package_limits",
    "package_version",
    "parse_destination",
    "parse_frontmatter",
    "parse_pin",
    "parse_tool_schemas",
    "process_folder",
    "read_resource",
    "reloading",
    "remove_tree",
    "render_activation",
    "render_catalog",
    "render_entries",
    "review_line",
    "skill_allowance",
    "skill_document",
    "skill_id",
    "skill_version",
    "stored_report",
    "valid_host",
    "validate_paths",
    "with_frontmatter_fields",
    "worst_first",
    "write_package",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
