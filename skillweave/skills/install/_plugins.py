"""Which skill folders of a fetched source an install or a listing takes: every skill of it,
or those of the marketplace plugins named (``--plugin NAME``), each with the plugins that list
it (:func:`plugin_folders`; for a listing, every plugin's: :func:`marketplace_plugins`).

Called by the install flow (``_installation``) and the listing (``_contents``) once
``_fetched`` has read the source; the marketplace is read by ``_marketplace``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillweave.errors import PackageError
from skillweave.skills.install._marketplace import (
    MARKETPLACE_FILE,
    Marketplace,
    plugin_skill_folders,
)

__all__ = ["marketplace_plugins", "plugin_folders"]


def plugin_folders(
    root: Path, marketplace: Marketplace | None, plugins: Sequence[str]
) -> dict[Path, tuple[str, ...]]:
    """The skill folders of `plugins` in the source at `root` (a folder two plugins list, once),
    each with the plugins (of those named) that list it, in the order they are named.

    Raises:
        PackageError: the source has no marketplace; a plugin is not there (the line lists
            those there are) or not installable here; a folder it lists is not a skill.
    """
    if marketplace is None:
        raise PackageError(
            f"--plugin needs a plugin marketplace, and the source has no {MARKETPLACE_FILE}"
        )
    folders: dict[Path, tuple[str, ...]] = {}
    for name in dict.fromkeys(plugins):
        for folder in plugin_skill_folders(root, marketplace.plugin(name)):
            folders[folder] = (*folders.get(folder, ()), name)
    return folders


def marketplace_plugins(marketplace: Marketplace | None, root: Path) -> dict[Path, tuple[str, ...]]:
    """Every installable plugin's skill folders (for a listing), each with the plugins that
    list it; a plugin whose folders cannot be read is left out (its reason is the
    marketplace's to show). Empty without a marketplace."""
    folders: dict[Path, tuple[str, ...]] = {}
    if marketplace is None:
        return folders
    for plugin in marketplace.plugins:
        if plugin.unavailable is not None:
            continue
        try:
            listed = plugin_skill_folders(root, plugin)
        except PackageError:
            continue
        for folder in listed:
            folders[folder] = (*folders.get(folder, ()), plugin.name)
    return folders
