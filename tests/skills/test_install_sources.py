"""The ecosystem's names of a skill source, read (``skills.install._address`` and
``_source``): ``owner/repo[/path]``, tree URLs, host URLs, the path-or-shorthand rule, and
hostile forms refused in one line before anything is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.errors import PackageError
from skillweave.skills.install import parse_source, source_allowed

GITHUB = "https://github.com"


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        ("acme/skills", {}, ("https://github.com/acme/skills.git", None, None)),
        ("acme/skills.git", {}, ("https://github.com/acme/skills.git", None, None)),
        ("acme/skills/", {}, ("https://github.com/acme/skills.git", None, None)),
        ("acme/skills/skills/pdf", {}, ("https://github.com/acme/skills.git", None, "skills/pdf")),
        ("acme/skills", {"ref": "v2"}, ("https://github.com/acme/skills.git", "v2", None)),
        ("acme/.github", {}, ("https://github.com/acme/.github.git", None, None)),
        ("https://github.com/acme/skills", {}, ("https://github.com/acme/skills.git", None, None)),
        (
            "https://github.com/acme/skills.git",
            {},
            ("https://github.com/acme/skills.git", None, None),
        ),
        (
            "https://github.com/acme/skills/tree/main/skills/pdf",
            {},
            ("https://github.com/acme/skills.git", "main", "skills/pdf"),
        ),
        (
            "https://github.com/acme/skills/tree/v1.2",
            {},
            ("https://github.com/acme/skills.git", "v1.2", None),
        ),
        (
            "https://github.com/acme/skills/tree/feature/x/skills/pdf",
            {"ref": "feature/x"},
            ("https://github.com/acme/skills.git", "feature/x", "skills/pdf"),
        ),
        (
            "https://github.com/acme/skills/tree/main/skills/pdf",
            {"ref": "main", "path": "skills/pdf/"},
            ("https://github.com/acme/skills.git", "main", "skills/pdf"),
        ),
        (
            "https://gitlab.example/group/sub/repo/-/tree/v1/skills",
            {},
            ("https://gitlab.example/group/sub/repo.git", "v1", "skills"),
        ),
        ("https://git.example/x/y", {}, ("https://git.example/x/y", None, None)),
        ("git@git.example:x/y.git", {}, ("git@git.example:x/y.git", None, None)),
    ],
)
def test_each_form_reads_as_one_canonical_git_address(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    options: dict[str, str],
    expected: tuple[str, str | None, str | None],
) -> None:
    monkeypatch.chdir(tmp_path)
    source = parse_source(text, git_host=GITHUB, **options)
    assert source.kind == "git"
    assert (source.location, source.ref, source.path) == expected
    # What is recorded reads again as itself (skills.lock keeps location, ref and path).
    again = parse_source(source.location, ref=source.ref, path=source.path)
    assert again == source


def test_the_configured_host_and_its_tree_urls(tmp_path: Path) -> None:
    host = "https://git.acme.example"
    assert parse_source("acme/skills", git_host=host).location == f"{host}/acme/skills.git"
    tree = parse_source(f"{host}/acme/skills/tree/dev/skills/pdf", git_host=host)
    assert (tree.location, tree.ref, tree.path) == (f"{host}/acme/skills.git", "dev", "skills/pdf")
    # github.com's tree URLs are read whatever the host is.
    other = parse_source("https://github.com/o/r/tree/main/x", git_host=host)
    assert other.location == "https://github.com/o/r.git"


def test_a_file_host_is_a_folder_of_repositories(tmp_path: Path) -> None:
    host = f"file://{tmp_path}"
    (tmp_path / "acme" / "plain").mkdir(parents=True)
    (tmp_path / "acme" / "bare.git").mkdir(parents=True)
    assert parse_source("acme/plain", git_host=host).location == f"{host}/acme/plain"
    assert parse_source("acme/bare", git_host=host).location == f"{host}/acme/bare.git"
    tree = parse_source(f"{host}/acme/plain/tree/main/skills", git_host=host)
    assert (tree.location, tree.ref, tree.path) == (f"{host}/acme/plain", "main", "skills")


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        ("-acme/skills", {}, "no such file or folder"),
        ("acme/-skills", {}, "'-skills' is not a valid repository name"),
        ("acme/..", {}, "'..' is not a valid repository name"),
        ("acme/skills/../../etc", {}, "'..' is not a folder name"),
        ("a--b/skills", {}, "'a--b' is not a valid owner name"),
        ("acme-/skills", {}, "'acme-' is not a valid owner name"),
        ("a" * 40 + "/skills", {}, "not a valid owner name"),
        ("acme/sk$ills", {}, "not a valid repository name"),
        ("acme/skills@pdf", {}, "write owner/repo --skill NAME"),
        ("acme/skills/-x", {}, "'-x' is not a folder name read from a URL or owner/repo; name"),
        ("https://github.com/acme", {}, "name a repository as"),
        ("https://github.com/acme/skills/blob/main/SKILL.md", {}, "not a repository or tree URL"),
        ("https://github.com/acme/skills/tree/main/%2e%2e/x", {}, "escapes"),
        ("https://github.com/acme/skills/tree/main/x?y=1", {}, "a query"),
        ("https://github.com/acme/skills/tree/main/x#frag", {}, "fragment"),
        ("https://github.com/acme//skills", {}, "empty segments"),
        ("https://github.com/acme/skills/tree/main/../x", {}, "'..' is not a folder name"),
        ("https://github.com/acme/skills/tree/-main", {}, "not a branch, tag or commit"),
        ("http://github.com/acme/skills", {}, "carry no integrity"),
        ("git://github.com/acme/skills", {}, "carry no integrity"),
        (
            "https://github.com/acme/skills/tree/main/skills/pdf",
            {"ref": "dev"},
            "--ref dev disagrees with the URL's ref main",
        ),
        (
            "https://github.com/acme/skills/tree/main/skills/pdf",
            {"path": "skills/xlsx"},
            "--path skills/xlsx disagrees with the URL's path skills/pdf",
        ),
        ("acme/skills/skills/pdf", {"path": "other"}, "disagrees with the URL's path"),
        ("acme/skills", {"path": "../x"}, "must be a relative path inside the source"),
    ],
)
def test_hostile_and_bad_forms_are_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    options: dict[str, str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PackageError) as caught:
        parse_source(text, git_host=GITHUB, **options)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_shorthand_without_a_host_is_refused() -> None:
    with pytest.raises(PackageError, match="needs a git host"):
        parse_source("acme/skills")


def test_a_path_here_that_is_also_a_shorthand_is_refused_as_ambiguous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "acme" / "skills").mkdir(parents=True)
    with pytest.raises(PackageError) as caught:
        parse_source("acme/skills", git_host=GITHUB)
    assert str(caught.value) == (
        "acme/skills: both a path here and the repository https://github.com/acme/skills.git;"
        " write ./acme/skills for the path, or https://github.com/acme/skills.git for the"
        " repository"
    )
    # Written as the line says, each is read as meant.
    assert parse_source("./acme/skills", git_host=GITHUB).kind == "folder"
    assert parse_source("https://github.com/acme/skills.git").kind == "git"
    # A relative path that is no valid owner/repo is the path, plainly.
    (tmp_path / "my_skills" / "x").mkdir(parents=True)
    assert parse_source("my_skills/x", git_host=GITHUB).kind == "folder"
    # The API names local sources by absolute path: a shorthand there is always one.
    api = parse_source("acme/skills", git_host=GITHUB, relative_paths=False)
    assert api.location == "https://github.com/acme/skills.git"


def test_the_allowlist_judges_the_canonical_git_url() -> None:
    allowed = ["https://github.com/acme/*"]
    assert source_allowed("acme/skills", allowed, git_host=GITHUB)
    assert source_allowed("https://github.com/acme/skills/tree/main/skills/pdf", allowed)
    assert source_allowed("https://github.com/acme/skills", allowed)
    assert not source_allowed("evil/skills", allowed, git_host=GITHUB)
    assert not source_allowed("acme/..", allowed, git_host=GITHUB)
    assert not source_allowed("acme/skills", allowed)  # no host: no shorthand
    assert not source_allowed("http://github.com/acme/skills", allowed)
    assert not source_allowed("https://github.com/acme/skills/tree/main/%2e%2e", allowed)
