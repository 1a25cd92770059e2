"""A Claude Code plugin marketplace file (``.claude-plugin/marketplace.json``), read
(:func:`read_marketplace`), and the skill folders of its plugins (:func:`plugin_skill_folders`).

The file names the marketplace, its owner and its plugins; each plugin has a ``source`` (where
its folder is: ``"./"`` or ``"./plugins/x"`` in this repository, ``metadata.pluginRoot``
prepended; or another repository, given as an object or a URL) and may list its skill folders
(``"skills": ["./skills/xlsx", …]``, relative to the plugin's folder; none listed: the plugin's
``skills/*/`` folders that hold a SKILL.md). Public skill libraries ship one (the
anthropics/skills repository does).

Read as hostile input: the file is capped in size, must be a regular file (no symlink), and
the fields read are typed strictly; a plugin whose source is not a folder of this repository,
or whose paths leave it, is kept in the listing but marked not installable here, with the
reason (:attr:`MarketplacePlugin.unavailable`), and none of its paths is ever read. Fields this
reader does not use (hooks, commands, MCP servers, ...) are ignored: skillweave installs skills.

Called by the install flow (``skills install SOURCE --plugin NAME`` and ``--list``:
``cli.install``, ``api.skill_writes``) and by the registries that list a marketplace.
"""

from __future__ import annotations

import posixpath
import re
import stat
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillweave.errors import PackageError
from skillweave.skills.files import SKILL_FILE

__all__ = [
    "MARKETPLACE_FILE",
    "Marketplace",
    "MarketplacePlugin",
    "plugin_skill_folders",
    "read_marketplace",
]

MARKETPLACE_FILE: Final = ".claude-plugin/marketplace.json"
"""Where a repository keeps its marketplace, relative to its root."""

_MAX_BYTES: Final = 1024 * 1024
_MAX_PLUGINS: Final = 500
_MAX_SKILLS: Final = 500
_MAX_TEXT: Final = 4096
_MAX_PATH: Final = 1024
_NAME: Final = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?$")
_URL_LIKE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^[^/]+@[^/]+:")
_SHORTHAND: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+(?:/[^/]+)*$")
_DEFAULT_SKILLS: Final = "skills"


class MarketplacePlugin(BaseModel):
    """One plugin of a marketplace, as this repository can install it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    version: str | None = None
    source: str = Field(description="Its source as the file gives it (an object: summarised).")
    folder: str | None = Field(
        default=None,
        description="Its folder, relative to the repository's root ('.': the root); None when "
        "it is not installable here.",
    )
    skills: tuple[str, ...] = Field(
        default=(),
        description="The skill folders it lists, relative to the repository's root; empty: "
        "its folder's skills/*/ folders.",
    )
    unavailable: str | None = Field(
        default=None, description="Why it cannot be installed from this repository; None: it can."
    )


class Marketplace(BaseModel):
    """A repository's ``.claude-plugin/marketplace.json``: its name, owner and plugins."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    owner: str | None = None
    description: str = ""
    plugins: tuple[MarketplacePlugin, ...] = ()

    def plugin(self, name: str) -> MarketplacePlugin:
        """The plugin `name`, installable here.

        Raises:
            PackageError: there is none of that name (the line lists those there are), or it
                is not installable from this repository (the line says why).
        """
        for plugin in self.plugins:
            if plugin.name == name:
                if plugin.unavailable is not None:
                    raise PackageError(f"plugin {name!r}: {plugin.unavailable}")
                return plugin
        there = ", ".join(plugin.name for plugin in self.plugins) or "none"
        raise PackageError(
            f"the marketplace {self.name!r} has no plugin {name!r}; its plugins: {there}"
        )


def read_marketplace(root: Path) -> Marketplace | None:
    """The marketplace of the repository (or folder) at `root`; None when it has none.

    Raises:
        PackageError: the file is a symlink or not a regular file, is too large, or is not a
            marketplace this reader understands (one line naming the field).
    """
    path = root / MARKETPLACE_FILE
    try:
        for part in (path.parent, path):
            mode = part.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise PackageError(
                    f"{MARKETPLACE_FILE}: a symlink; a marketplace is read as a file"
                )
        if not stat.S_ISREG(mode):
            raise PackageError(f"{MARKETPLACE_FILE}: not a regular file")
        if path.stat().st_size > _MAX_BYTES:
            raise PackageError(f"{MARKETPLACE_FILE}: over {_MAX_BYTES} bytes")
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PackageError(f"{MARKETPLACE_FILE}: cannot be read: {exc.strerror}") from None
    if len(data) > _MAX_BYTES:
        raise PackageError(f"{MARKETPLACE_FILE}: over {_MAX_BYTES} bytes")
    try:
        raw = _RawMarketplace.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise PackageError(
            f"{MARKETPLACE_FILE}: not a plugin marketplace: {where}: {first['msg']}"
        ) from None
    return _marketplace(raw)


def plugin_skill_folders(root: Path, plugin: MarketplacePlugin) -> list[Path]:
    """The skill folders of `plugin` in the repository at `root`: those it lists (a listed
    folder without a SKILL.md stands for the skill folders in it), else its folder's
    ``skills/*/`` folders. Each lies inside `root` (symlinks resolved) and holds a SKILL.md.

    Raises:
        PackageError: the plugin is not installable here, a folder it lists leaves the
            repository or holds no skill, or it has no skill (one line).
    """
    if plugin.unavailable is not None or plugin.folder is None:
        raise PackageError(f"plugin {plugin.name!r}: {plugin.unavailable or 'not installable'}")
    base = root.resolve()
    if plugin.skills:
        folders: list[Path] = []
        for listed in plugin.skills:
            folder = _inside(base, listed, plugin=plugin.name)
            found = [folder] if (folder / SKILL_FILE).is_file() else _skill_folders_in(folder)
            if not found:
                raise PackageError(
                    f"plugin {plugin.name!r} lists {listed}, which holds no {SKILL_FILE}"
                    " nor skill folders"
                )
            folders += [f for f in found if f not in folders]
    else:
        where = posixpath.join(plugin.folder, _DEFAULT_SKILLS)
        folders = _skill_folders_in(_inside(base, where, plugin=plugin.name, must_exist=False))
        if not folders:
            raise PackageError(
                f"plugin {plugin.name!r} lists no skills and {where}/ holds no skill folder"
            )
    if len(folders) > _MAX_SKILLS:
        raise PackageError(f"plugin {plugin.name!r}: more than {_MAX_SKILLS} skills")
    return folders


def _skill_folders_in(folder: Path) -> list[Path]:
    """The folders right inside `folder` that hold a SKILL.md (hidden ones and symlinks
    aside), by name."""
    if not folder.is_dir():
        return []
    return sorted(
        entry
        for entry in folder.iterdir()
        if not entry.name.startswith(".")
        and not entry.is_symlink()
        and entry.is_dir()
        and (entry / SKILL_FILE).is_file()
    )


def _inside(base: Path, relative: str, *, plugin: str, must_exist: bool = True) -> Path:
    target = (base / relative).resolve()
    if not target.is_relative_to(base):
        raise PackageError(f"plugin {plugin!r}: {relative} leads outside the repository")
    if must_exist and not target.is_dir():
        raise PackageError(f"plugin {plugin!r}: no folder {relative} in the repository")
    return target


# -- the file as written ------------------------------------------------------------------


class _RawOwner(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    name: str = Field(max_length=_MAX_TEXT)


class _RawMetadata(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, populate_by_name=True)

    description: str | None = Field(default=None, max_length=_MAX_TEXT)
    plugin_root: str | None = Field(default=None, alias="pluginRoot", max_length=_MAX_PATH)


class _RawPlugin(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    name: str = Field(max_length=128)
    description: str | None = Field(default=None, max_length=_MAX_TEXT)
    version: str | None = Field(default=None, max_length=128)
    source: str | dict[str, object] = Field(max_length=_MAX_PATH)
    skills: str | list[str] | None = Field(default=None, max_length=_MAX_SKILLS)


class _RawMarketplace(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    name: str = Field(min_length=1, max_length=128)
    owner: _RawOwner | str | None = None
    description: str | None = Field(default=None, max_length=_MAX_TEXT)
    metadata: _RawMetadata | None = None
    plugins: list[_RawPlugin] = Field(max_length=_MAX_PLUGINS)


def _marketplace(raw: _RawMarketplace) -> Marketplace:
    plugin_root = (raw.metadata.plugin_root if raw.metadata else None) or "."
    base = _relative(".", plugin_root)
    plugins: list[MarketplacePlugin] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw.plugins):
        if not _NAME.match(entry.name):
            raise PackageError(
                f"{MARKETPLACE_FILE}: plugins.{index}.name {entry.name[:80]!r}: not a plugin name"
                " (letters, digits, '.', '_' and '-')"
            )
        if entry.name in seen:
            raise PackageError(f"{MARKETPLACE_FILE}: the plugin {entry.name!r} is named twice")
        seen.add(entry.name)
        plugins.append(_plugin(entry, base))
    owner = raw.owner.name if isinstance(raw.owner, _RawOwner) else raw.owner
    description = raw.description or (raw.metadata.description if raw.metadata else None) or ""
    return Marketplace(name=raw.name, owner=owner, description=description, plugins=tuple(plugins))


def _plugin(entry: _RawPlugin, base: str | None) -> MarketplacePlugin:
    common = {
        "name": entry.name,
        "description": entry.description or "",
        "version": entry.version,
    }
    if isinstance(entry.source, dict):
        shown, reason = _other_repository(entry.source)
        return MarketplacePlugin(**common, source=shown, unavailable=reason)
    source = entry.source
    if _URL_LIKE.match(source):
        return MarketplacePlugin(
            **common,
            source=source,
            unavailable=f"its source is another repository ({source}): install that one",
        )
    # As Claude Code reads it: a folder of this repository starts with "./" (or is a name
    # under metadata.pluginRoot); "owner/repo" is another repository.
    if base == "." and _SHORTHAND.match(source):
        return MarketplacePlugin(
            **common,
            source=source,
            unavailable="its source is another repository "
            f"({source}): install it with `skillweave skills install {source}`",
        )
    folder = _relative(base, source) if base is not None else None
    if folder is None:
        return MarketplacePlugin(
            **common,
            source=source,
            unavailable=f"its source {source!r} is not a folder inside this repository",
        )
    listed = [entry.skills] if isinstance(entry.skills, str) else entry.skills or []
    skills = []
    for path in listed:
        inside = _relative(folder, path)
        if inside is None:
            return MarketplacePlugin(
                **common,
                source=source,
                unavailable=f"it lists {path[:200]!r}, which is not a folder inside this"
                " repository",
            )
        skills.append(inside)
    return MarketplacePlugin(**common, source=source, folder=folder, skills=tuple(skills))


def _other_repository(source: dict[str, object]) -> tuple[str, str]:
    """How a plugin whose source is an object (another repository, a package) is shown, and
    why it is not installable here."""
    kind = source.get("source")
    repo = source.get("repo")
    url = source.get("url")
    if kind == "github" and isinstance(repo, str):
        shown = repo[:_MAX_PATH]
        return f"github:{shown}", (
            f"its source is another repository ({shown}): install it with"
            f" `skillweave skills install {shown}`"
        )
    if isinstance(url, str):
        shown = url[:_MAX_PATH]
        return shown, f"its source is another repository ({shown}): install that one"
    shown = kind[:64] if isinstance(kind, str) else "an object"
    return shown, f"its source ({shown}) is not a folder of this repository"


def _relative(base: str, path: str) -> str | None:
    """`path` (relative to `base`, both relative to the repository's root) as a normalised
    path relative to the root ('.': the root); None when it is absolute, odd or leaves it."""
    if not path or "\\" in path or "\x00" in path or path.startswith("/") or len(path) > _MAX_PATH:
        return None
    joined = posixpath.normpath(posixpath.join(base, path))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return joined
