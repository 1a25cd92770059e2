"""``/v1/skills`` over real HTTP: uploads (text and ZIP), listing, files, states and refusals."""

from __future__ import annotations

import asyncio
import io
import json
import os
import stat
import zipfile
from pathlib import Path

import httpx
import pytest

from skillweave.skills import SkillScanner
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.package import DEFAULT_MAX_RATIO, RATIO_CHECK_FLOOR
from skillweave.skills.stored import StoredSkills
from skillweave.storage import keys
from tests.api.conftest import DIRECTORY_SKILL, Api

PROBLEM = "application/problem+json"
DESCRIPTION = "Says hello. Use when greeting someone."
HELLO = b'import sys\nprint("hello", *sys.argv[1:])\n'


def skill_md(name: str, description: str = DESCRIPTION, body: str = "# Hello\n\nSay hi.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def make_zip(entries: dict[str, bytes], *, symlinks: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def hello_zip(name: str = "hello", *, top: str | None = None) -> bytes:
    folder = f"{top if top is not None else name}/"
    return make_zip(
        {f"{folder}SKILL.md": skill_md(name).encode(), f"{folder}scripts/hello.py": HELLO}
    )


async def upload(api: Api, data: bytes, **fields: str) -> httpx.Response:
    files = {"file": ("skill.zip", data, "application/zip")}
    return await api.client.post("/v1/skills/upload", files=files, data=fields)


async def stored_keys(api: Api) -> list[str]:
    refs = [*await api.store.list("skills/"), *await api.store.list("catalog/")]
    return [ref.key for ref in refs]


def assert_problem(response: httpx.Response, status: int, *needles: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["status"] == status
    assert body["title"]
    for needle in needles:
        assert needle in body["detail"], body["detail"]


async def test_content_skill_lists_gets_and_serves_files(api: Api) -> None:
    content = skill_md("greet")
    created = await api.client.post(
        "/v1/skills/", json={"name": "greet", "description": DESCRIPTION, "content": content}
    )
    assert created.status_code == 201, created.text
    skill = created.json()
    assert skill["source"] == "uploaded"
    assert skill["enabled"] is True
    assert [v["version"] for v in skill["versions"]] == [skill["latest"]]
    assert skill["versions"][0]["files"] == ["SKILL.md"]

    page = (await api.client.get("/v1/skills/")).json()
    assert page["total"] == 2
    assert [(i["name"], i["source"]) for i in page["items"]] == [
        (DIRECTORY_SKILL, "directory"),
        ("greet", "uploaded"),
    ]

    detail = (await api.client.get("/v1/skills/greet")).json()
    assert detail["version"] == skill["latest"]
    assert detail["files"] == ["SKILL.md"]

    file = await api.client.get(f"/v1/skills/greet/versions/{skill['latest']}/files/SKILL.md")
    assert file.status_code == 200
    assert file.headers["content-type"].startswith("text/plain")
    assert file.text == content


async def test_same_content_twice_is_one_version(api: Api) -> None:
    body = {"name": "greet", "description": DESCRIPTION, "content": skill_md("greet")}
    first = (await api.client.post("/v1/skills/", json=body)).json()
    second = (await api.client.post("/v1/skills/", json=body)).json()
    assert second["latest"] == first["latest"]
    assert len(second["versions"]) == 1
    packages = [r for r in await api.store.list("skills/greet/") if r.key.endswith(".zip")]
    assert len(packages) == 1

    body["content"] = skill_md("greet", body="# Hello\n\nSay hi twice.\n")
    third = (await api.client.post("/v1/skills/", json=body)).json()
    assert third["latest"] != first["latest"]
    assert [v["version"] for v in third["versions"]] == [first["latest"], third["latest"]]


async def test_zip_upload_stores_a_runnable_package(api: Api) -> None:
    response = await upload(api, hello_zip(), name="hello", description=DESCRIPTION)
    assert response.status_code == 201, response.text
    skill = response.json()
    version = skill["latest"]
    assert skill["versions"][0]["files"] == ["SKILL.md", "scripts/hello.py"]

    file = await api.client.get(f"/v1/skills/hello/versions/{version}/files/scripts/hello.py")
    assert file.status_code == 200
    assert file.content == HELLO

    # The manager runs scripts of whatever is stored under this key.
    ref = await api.store.stat(keys.skill_package_key("hello", version))
    assert ref is not None
    assert ref.sha256 == skill["versions"][0]["sha256"]
    with zipfile.ZipFile(io.BytesIO(await api.store.get_bytes(ref))) as archive:
        assert archive.namelist() == ["hello/SKILL.md", "hello/scripts/hello.py"]
        assert archive.read("hello/scripts/hello.py") == HELLO


async def test_zip_with_skill_at_root_and_rebuilt_canonically(api: Api) -> None:
    at_root = make_zip({"SKILL.md": skill_md("hello").encode(), "scripts/hello.py": HELLO})
    first = await upload(api, at_root)
    assert first.status_code == 201, first.text
    # The same files in another archive layout are the same version and the same bytes.
    second = await upload(api, hello_zip())
    assert second.status_code == 201, second.text
    assert second.json()["latest"] == first.json()["latest"]
    assert len(second.json()["versions"]) == 1


async def test_uploaded_skill_materializes_for_the_scanner(api: Api, tmp_path: Path) -> None:
    version = (await upload(api, hello_zip())).json()["latest"]
    stored = StoredSkills(api.store)
    dest = await stored.materialize(tmp_path / "uploaded")
    skill = SkillScanner([dest]).scan().skills["hello"]
    # Discovery pins the same version the store keys the package under.
    assert skill.version == version
    assert (dest / "hello" / "scripts" / "hello.py").read_bytes() == HELLO

    await stored.set_enabled("hello", False)
    await stored.materialize(dest)
    assert not (dest / "hello").exists()


async def test_concurrent_uploads_of_one_name_keep_every_version(api: Api) -> None:
    bodies = [
        {"name": "greet", "description": DESCRIPTION, "content": skill_md("greet", body=f"# {i}\n")}
        for i in range(4)
    ]
    responses = await asyncio.gather(*(api.client.post("/v1/skills/", json=b) for b in bodies))
    assert all(r.status_code == 201 for r in responses)
    detail = (await api.client.get("/v1/skills/greet")).json()
    assert len(detail["versions"]) == 4


@pytest.mark.parametrize(
    ("body", "needles"),
    [
        (
            {"name": "greet", "description": DESCRIPTION, "content": "no frontmatter\n"},
            ("frontmatter",),
        ),
        (
            {
                "name": "greet",
                "description": DESCRIPTION,
                "content": skill_md("greet").replace("---\n#", "color: red\n---\n#"),
            },
            ("color", "unknown key"),
        ),
        (
            {"name": "Bad_Name", "description": DESCRIPTION, "content": skill_md("Bad_Name")},
            ("Bad_Name",),
        ),
    ],
    ids=["no-frontmatter", "unknown-key", "bad-name"],
)
async def test_invalid_content_is_refused_and_nothing_stored(
    api: Api, body: dict[str, str], needles: tuple[str, ...]
) -> None:
    response = await api.client.post("/v1/skills/", json=body)
    assert_problem(response, 422, *needles)
    assert await stored_keys(api) == []


BOMB = b"\0" * (RATIO_CHECK_FLOOR * DEFAULT_MAX_RATIO // 4)


@pytest.mark.parametrize(
    ("data", "needles"),
    [
        (make_zip({"hello/SKILL.md": skill_md("hello").encode(), "../x": b"x"}), ("../x",)),
        (
            make_zip({"hello/SKILL.md": skill_md("hello").encode(), "/etc/x": b"x"}),
            ("/etc/x", "absolute"),
        ),
        (
            make_zip(
                {"hello/SKILL.md": skill_md("hello").encode()},
                symlinks={"hello/link": "/etc/passwd"},
            ),
            ("hello/link", "symbolic link"),
        ),
        (
            make_zip({"hello/SKILL.md": skill_md("hello").encode(), "hello/big.bin": BOMB}),
            ("hello/big.bin", "compression ratio"),
        ),
        (make_zip({"hello/README.md": b"no skill here"}), ("SKILL.md",)),
        (b"not a zip at all", ("not a ZIP",)),
        (
            make_zip({"a/SKILL.md": skill_md("a").encode(), "b/SKILL.md": skill_md("b").encode()}),
            ("one top skill",),
        ),
        (
            make_zip({"hello/SKILL.md": skill_md("hello").replace("description", "x").encode()}),
            ("description",),
        ),
    ],
    ids=[
        "traversal",
        "absolute",
        "symlink",
        "bomb",
        "no-skill-md",
        "not-zip",
        "two-skills",
        "invalid",
    ],
)
async def test_bad_zip_is_refused_and_nothing_stored(
    api: Api, data: bytes, needles: tuple[str, ...]
) -> None:
    response = await upload(api, data)
    assert_problem(response, 422, *needles)
    assert await stored_keys(api) == []


async def test_zip_fields_must_agree(api: Api) -> None:
    assert_problem(await upload(api, hello_zip(), name="other"), 422, "other", "hello")
    assert_problem(await upload(api, hello_zip(), description="Another."), 422, "description")
    assert await stored_keys(api) == []


async def test_oversized_bodies_are_413(small_api: Api) -> None:
    big = make_zip({"hello/SKILL.md": skill_md("hello").encode(), "hello/x.bin": os.urandom(4096)})
    assert_problem(await upload(small_api, big), 413, "limit")
    body = {
        "name": "greet",
        "description": DESCRIPTION,
        "content": skill_md("greet", body="x" * 2000),
    }
    assert_problem(await small_api.client.post("/v1/skills/", json=body), 413, "limit")
    assert await stored_keys(small_api) == []


ROUTES = [
    ("GET", "/v1/skills/"),
    ("POST", "/v1/skills/"),
    ("POST", "/v1/skills/upload"),
    ("GET", "/v1/skills/greet"),
    ("PATCH", "/v1/skills/greet"),
    ("DELETE", "/v1/skills/greet"),
    ("GET", "/v1/skills/greet/versions/v1/files/SKILL.md"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize("token", [None, "wrong"])
async def test_every_route_needs_the_token(
    api: Api, method: str, path: str, token: str | None
) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(base_url=api.url, headers=headers) as client:
        response = await client.request(method, path)
    assert_problem(response, 401, "token")
    assert response.headers["www-authenticate"] == "Bearer"


async def test_healthz_needs_no_token(api: Api) -> None:
    async with httpx.AsyncClient(base_url=api.url) as client:
        assert (await client.get("/healthz")).status_code == 200


async def test_enable_disable_and_delete(api: Api) -> None:
    version = (await upload(api, hello_zip())).json()["latest"]
    patched = await api.client.patch("/v1/skills/hello", json={"enabled": False})
    assert patched.status_code == 200
    assert patched.json()["enabled"] is False

    disabled = (await api.client.get("/v1/skills/", params={"enabled": "false"})).json()
    assert [i["name"] for i in disabled["items"]] == ["hello"]
    enabled = (await api.client.get("/v1/skills/", params={"enabled": "true"})).json()
    assert [i["name"] for i in enabled["items"]] == [DIRECTORY_SKILL]

    await api.client.patch("/v1/skills/hello", json={"enabled": True})
    assert (await api.client.get("/v1/skills/hello")).json()["enabled"] is True

    deleted = await api.client.delete("/v1/skills/hello")
    assert deleted.status_code == 204
    assert_problem(await api.client.get("/v1/skills/hello"), 404, "hello")
    # Only the record goes: runs that pinned the version still run its package.
    assert await api.store.stat(keys.skill_package_key("hello", version)) is not None
    assert await api.store.stat(keys.skill_index_key("hello")) is None
    assert_problem(await api.client.delete("/v1/skills/hello"), 404, "hello")
    assert_problem(await api.client.patch("/v1/skills/hello", json={"enabled": True}), 404, "hello")


async def test_directory_skills_are_read_only(api: Api) -> None:
    detail = (await api.client.get(f"/v1/skills/{DIRECTORY_SKILL}")).json()
    assert detail["source"] == "directory"
    assert detail["files"] == ["SKILL.md", "references/notes.md"]
    notes = await api.client.get(
        f"/v1/skills/{DIRECTORY_SKILL}/versions/{detail['version']}/files/references/notes.md"
    )
    assert notes.text == "notes\n"

    patch = await api.client.patch(f"/v1/skills/{DIRECTORY_SKILL}", json={"enabled": False})
    assert_problem(patch, 409, "SKILLS__DISABLED")
    assert_problem(await api.client.delete(f"/v1/skills/{DIRECTORY_SKILL}"), 409, "directory")
    content = skill_md(DIRECTORY_SKILL)
    body = {"name": DIRECTORY_SKILL, "description": DESCRIPTION, "content": content}
    assert_problem(await api.client.post("/v1/skills/", json=body), 409, DIRECTORY_SKILL)
    assert_problem(await upload(api, hello_zip(DIRECTORY_SKILL)), 409, DIRECTORY_SKILL)
    assert await stored_keys(api) == []


async def test_list_filters_and_pages(api: Api) -> None:
    for name in ("alpha", "beta", "gamma"):
        body = {"name": name, "description": DESCRIPTION, "content": skill_md(name)}
        assert (await api.client.post("/v1/skills/", json=body)).status_code == 201
    uploaded = (await api.client.get("/v1/skills/", params={"source": "uploaded"})).json()
    assert [i["name"] for i in uploaded["items"]] == ["alpha", "beta", "gamma"]
    directory = (await api.client.get("/v1/skills/", params={"source": "directory"})).json()
    assert [i["name"] for i in directory["items"]] == [DIRECTORY_SKILL]
    found = (await api.client.get("/v1/skills/", params={"q": "ETA"})).json()
    assert [i["name"] for i in found["items"]] == ["beta"]
    page = (await api.client.get("/v1/skills/", params={"limit": 2, "offset": 1})).json()
    assert page["total"] == 4
    assert [i["name"] for i in page["items"]] == ["beta", DIRECTORY_SKILL]
    assert_problem(await api.client.get("/v1/skills/", params={"limit": 0}), 422, "limit")


async def test_unknown_and_traversing_files_are_404(api: Api) -> None:
    version = (await upload(api, hello_zip())).json()["latest"]
    base = f"/v1/skills/hello/versions/{version}/files"
    assert_problem(await api.client.get(f"{base}/nope.txt"), 404, "nope.txt")
    assert_problem(await api.client.get(f"{base}/..%2F..%2Fcatalog%2Fskills%2Fhello.json"), 404)
    assert_problem(await api.client.get(f"{base}/scripts"), 404)
    assert_problem(
        await api.client.get(f"/v1/skills/hello/versions/{'0' * 64}/files/SKILL.md"), 404
    )
    assert_problem(await api.client.get("/v1/skills/nobody/versions/v/files/SKILL.md"), 404)
    directory = f"/v1/skills/{DIRECTORY_SKILL}/versions"
    version = (await api.client.get(f"/v1/skills/{DIRECTORY_SKILL}")).json()["version"]
    assert_problem(await api.client.get(f"{directory}/{version}/files/..%2FSKILL.md"), 404)
    assert_problem(await api.client.get(f"{directory}/{version}/files/%2Fetc%2Fpasswd"), 404)


async def test_openapi_lists_the_routes(api: Api) -> None:
    schema = (await api.client.get("/openapi.json")).json()
    assert "/v1/skills/upload" in schema["paths"]
    assert "201" in schema["paths"]["/v1/skills/"]["post"]["responses"]


@pytest.mark.parametrize(
    "content_type",
    ["application/x-www-form-urlencoded", "text/plain", "application/octet-stream"],
)
async def test_json_sent_without_the_json_content_type_is_a_415_naming_the_header(
    api: Api, content_type: str
) -> None:
    """`curl -d '{...}'` sends the JSON as a form; the answer says which header to send."""
    body = {"name": "greet", "description": DESCRIPTION, "content": skill_md("greet")}
    raw = json.dumps(body).encode()
    headers = {"Content-Type": content_type}
    wrong = await api.client.post("/v1/skills/", content=raw, headers=headers)
    assert_problem(wrong, 415, "Content-Type: application/json", content_type)
    assert await api.store.list("skills/greet/") == []

    # The same bytes as JSON, or with no Content-Type at all, are read as JSON.
    right = await api.client.post(
        "/v1/skills/", content=raw, headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert right.status_code == 201, right.text


@pytest.mark.parametrize(
    ("body", "overridden"),
    [
        ({"name": "greet", "content": skill_md("other")}, ["name"]),
        ({"name": "greet", "description": "Greets people warmly."}, ["description"]),
        (
            {"name": "greet", "description": "Greets: warmly.", "content": skill_md("Greet")},
            ["name", "description"],
        ),
        ({"name": "greet", "description": f"  {DESCRIPTION}  "}, []),
    ],
    ids=["name", "description", "both", "same-but-spacing"],
)
async def test_the_request_s_name_and_description_win_over_the_frontmatter(
    api: Api, body: dict[str, str], overridden: list[str]
) -> None:
    """As the platform's published examples send them: the JSON says what the skill is."""
    sent = {"description": DESCRIPTION, "content": skill_md("greet"), **body}
    response = await api.client.post("/v1/skills/", json=sent)
    assert response.status_code == 201, response.text
    made = response.json()
    assert made["name"] == "greet"
    assert made["overridden"] == overridden
    assert made["description"] == " ".join(sent["description"].split())

    stored = await api.client.get(f"/v1/skills/greet/versions/{made['latest']}/files/SKILL.md")
    front = parse_frontmatter(stored.text)
    assert front.data["name"] == "greet"
    assert " ".join(front.data["description"].split()) == made["description"]
    assert front.body == "# Hello\n\nSay hi.\n"
    if not overridden:
        assert stored.text == sent["content"]  # nothing to replace: stored as sent


async def test_every_answer_names_the_version_version(api: Api) -> None:
    """One name for the version field (issue 39): ``version`` on writes and reads alike;
    writes keep ``latest`` for older clients."""
    body = {"name": "greet", "description": DESCRIPTION, "content": skill_md("greet")}
    made = (await api.client.post("/v1/skills/", json=body)).json()
    assert made["version"] == made["latest"] == made["versions"][-1]["version"]
    assert (made["enabled"], made["held"]) == (True, False)
    detail = (await api.client.get("/v1/skills/greet")).json()
    assert detail["version"] == made["version"]
    listed = (await api.client.get("/v1/skills/", params={"source": "uploaded"})).json()
    assert [item["version"] for item in listed["items"]] == [made["version"]]
    zipped = (await upload(api, hello_zip())).json()
    assert zipped["version"] == zipped["latest"]
    patched = (await api.client.patch("/v1/skills/greet", json={"enabled": False})).json()
    assert (patched["version"], patched["enabled"]) == (made["version"], False)
    schema = (await api.client.get("/openapi.json")).json()["components"]["schemas"]
    assert schema["SkillRecord"]["properties"]["latest"]["deprecated"] is True


async def test_a_skill_another_process_stores_is_unpacked_for_runs_within_the_reload_period(
    api: Api, tmp_path: Path
) -> None:
    """A skill stored by another writer (``skills install``, another API replica) reaches
    the library runs are pinned against, without a restart; switched off, it leaves it."""
    other = StoredSkills(api.store)  # not this API's: it is not told of the change
    await other.add_content("greet", DESCRIPTION, skill_md("greet"))
    served = tmp_path / "uploaded" / "greet" / "SKILL.md"
    for _ in range(200):  # the reload period is 2 s; wait up to 10
        if served.is_file():
            break
        await asyncio.sleep(0.05)
    assert served.is_file()
    await other.set_enabled("greet", False)
    for _ in range(200):
        if not served.exists():
            break
        await asyncio.sleep(0.05)
    assert not served.exists()
