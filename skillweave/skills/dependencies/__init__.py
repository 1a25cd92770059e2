"""Dependency discovery: the packages a skill version declares, merged into one spec.

Skill authors declare dependencies the way they already do, and :func:`discover_dependencies`
reads all of it from the package's files (relative POSIX path → bytes; no filesystem) into one
:class:`DependencySpec`, which the environment builder installs and stores beside the build.
The sources, all relative to the skill's root (the folder with ``SKILL.md``):

``SKILL.md`` frontmatter
    ``metadata.dependencies: {python: [...], node: {name: range}}`` or a plain list of Python
    requirements (our extension; its shape is the spec module's to check). The same at the top
    level is read too, for skills written before extensions moved under ``metadata`` (lenient
    loading warns about it, strict validation refuses it). A ``dependencies`` *string* names
    skills, not packages, and is ignored here.
``requirements.txt``
    One PEP 508 requirement a line; comments, blank lines, ``\\`` continuations and ``-r FILE``
    includes of files inside the package (relative to the including file; no escaping the
    package, no loops; a file included twice is read once). Every other option (``-i``,
    ``--index-url``, ``--extra-index-url``, ``-f``, ``--no-index``, ``-e``, ``-c``, ...) and
    every URL or path given as a requirement is refused: the index is the operator's choice
    (``sandbox.environments`` settings) and a skill must not redirect it. ``--hash`` options
    are ignored, so ``pip-compile --generate-hashes`` output reads unchanged: environments come
    from the index the operator trusts, and the pins stay.
``scripts/**/*.py``
    PEP 723 inline script metadata: the ``# /// script`` ... ``# ///`` block, found with the
    PEP's reference regular expression (line ends normalised to LF first, as Python reads a
    script; bytes read as UTF-8), its ``dependencies`` and ``requires-python``. Two ``script``
    blocks in one file are an error; blocks of other types, unclosed blocks and ``.py`` files
    outside ``scripts/`` are ignored.
``package.json``
    ``dependencies`` (name → version range). ``devDependencies`` and ``peerDependencies`` are
    ignored, and so are ``optionalDependencies``: npm tolerates their failure (they are mostly
    platform-specific), which a spec of plain requirements cannot express; a dependency a
    script needs belongs in ``dependencies``. ``file:``, ``link:``, git, GitHub shorthand,
    URL and other protocol specs are refused: they escape the index.

Merging, one rule each, kept simple on purpose:

* Python: one requirement per canonical (PEP 503) project name. The same project from several
  places has its specifier sets intersected (``SpecifierSet &``) and its extras united; its
  markers must be equal. A conflict (a :class:`DependencyError` naming both requirements and
  where each came from) is an exact pin (``==X``) that another declaration excludes (``==1.0``
  and ``==2.0``, ``==1.0`` and ``>=2``), or two different markers. Other contradictions
  (``>=2`` and ``<1``) are left for the resolver, whose build error names the package.
* Node: the same name twice must have textually equal ranges (whitespace aside).
* ``requires-python``: the specifier sets of all scripts intersected, pins checked as above.

Limits: a source file over :data:`MAX_SOURCE_BYTES`, or more than ``max_dependencies``
distinct Python and Node packages in all, is a :class:`DependencyError`; the count is taken on
names before any requirement is parsed, so a huge list costs little to refuse. pip's own
requirements parser is not a public library (and would follow options we refuse), so the
small subset above is read here.

The modules, lowest first:

* ``_declarations``: what the sources declare before merging, and the rules they share (size
  cap, no URL or path, npm names and ranges).
* ``_requirements_file``: ``requirements.txt`` with its includes.
* ``_sources``: ``SKILL.md`` frontmatter, PEP 723 script blocks, ``package.json``.
* ``_merging``: one requirement per project, one range per npm package, one
  ``requires-python``; conflicts refused.
* ``_dependency_spec``: :class:`DependencySpec`, declared and inferred, and its printed lines.
* ``_inventory``: :func:`discover_dependencies`, :func:`package_dependencies` and
  :func:`base_environment`, which put the others together.
"""

from skillweave.skills.dependencies._declarations import MAX_SOURCE_BYTES
from skillweave.skills.dependencies._dependency_spec import (
    BASE_SOURCE,
    DependencySpec,
    dependency_lines,
)
from skillweave.skills.dependencies._inventory import (
    DEFAULT_MAX_DEPENDENCIES,
    base_environment,
    discover_dependencies,
    package_dependencies,
)

__all__ = [
    "BASE_SOURCE",
    "DEFAULT_MAX_DEPENDENCIES",
    "MAX_SOURCE_BYTES",
    "DependencySpec",
    "base_environment",
    "dependency_lines",
    "discover_dependencies",
    "package_dependencies",
]
