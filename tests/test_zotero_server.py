"""The fake Zotero Web API behaves like the real one where zotrec depends on it (docs/zotero-web-api.md)."""

from __future__ import annotations

import json

import httpx2
import pytest
from pyzotero import zotero

from .conftest import PYZOTERO_RESPONSES, ZOTERO_READ_KEY, ZOTERO_USER_ID, ZOTERO_WRITE_KEY

FIXTURES = PYZOTERO_RESPONSES


@pytest.fixture
def api(zotero_server):
    """A raw HTTP client with the write key and the user library prefix."""
    with httpx2.Client(base_url=f"{zotero_server.url}/users/{ZOTERO_USER_ID}",
                       headers={"Zotero-API-Key": ZOTERO_WRITE_KEY, "Zotero-API-Version": "3"}) as client:
        yield client


def test_pyzotero_pages_through_everything_over_http(zotero_server):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    for number in range(230):
        zotero_server.add_item(library, title=f"paper {number}")
    zot = zotero.Zotero(ZOTERO_USER_ID, "user", ZOTERO_WRITE_KEY)
    zot.endpoint = zotero_server.url
    top = zot.everything(zot.top(limit=100))
    live = [v for v in library.items.values() if not v.get("parentItem") and not v.get("deleted")]
    expected = [v["key"] for v in sorted(live, key=lambda v: v["dateModified"], reverse=True)]  # newest first
    assert [item["key"] for item in top] == expected
    assert len([r for r in zotero_server.requests if "/items/top" in r[1]]) == 3  # ceil(252 / 100)


def test_paging_headers_and_limits(api, zotero_server):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    for number in range(150):
        zotero_server.add_item(library, title=f"paper {number}")
    assert len(api.get("/items", params={"limit": 1000}).json()) == 100  # cut to 100, not refused
    assert len(api.get("/items").json()) == 25  # the default page
    small = api.get("/items", params={"limit": 5, "start": 5})
    assert len(small.json()) == 5
    assert int(small.headers["Total-Results"]) == len([i for i in library.items.values() if not i.get("deleted")])
    links = small.headers["Link"]
    assert 'rel="next"' in links and 'rel="prev"' in links and 'rel="last"' in links
    assert "start=10" in links and "limit=5" in links and ZOTERO_WRITE_KEY not in links
    assert small.headers["Last-Modified-Version"] == str(library.version)


def test_versions_since_trash_and_deleted(api, zotero_server):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    version = library.version
    key = zotero_server.add_item(library, title="new")
    versions = api.get("/items", params={"format": "versions", "since": version}).json()
    assert versions == {key: library.version}
    every = api.get("/items", params={"format": "versions"}).json()
    assert len(every) == len([i for i in library.items.values() if not i.get("deleted")])  # no limit applies
    trashed = api.get("/items/trash").json()
    assert [t["data"]["title"] for t in trashed] == ["A paper the user threw away"]
    assert api.get("/deleted").status_code == 400
    zotero_server.delete_item(library, key)
    assert api.get("/deleted", params={"since": version}).json()["items"] == [key]
    assert api.get("/items", headers={"If-Modified-Since-Version": str(library.version)}).status_code == 304


def test_response_shapes_match_the_recorded_ones(api):
    recorded_item = json.loads((FIXTURES / "items_doc.json").read_text(encoding="utf-8"))[0]
    recorded_collection = json.loads((FIXTURES / "collections_doc.json").read_text(encoding="utf-8"))[0]
    item = api.get(f"/items/{recorded_item['key']}").json()
    assert set(item) <= set(recorded_item) and {"key", "version", "library", "data", "meta", "links"} <= set(item)
    assert item["data"] == recorded_item["data"]
    collection = api.get("/collections", params={"limit": 100}).json()[0]
    assert set(collection) == set(recorded_collection)
    assert set(collection["meta"]) == set(recorded_collection["meta"])


def test_writes_check_limits_tokens_and_versions(api, zotero_server):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    note = {"itemType": "note", "note": "x", "tags": [], "collections": [], "relations": {}}
    assert api.post("/items", json=[note] * 51).status_code == 413
    first = api.post("/items", json=[note], headers={"Zotero-Write-Token": "t" * 32})
    assert first.status_code == 200 and set(first.json()) == {"successful", "success", "unchanged", "failed"}
    assert first.headers["Last-Modified-Version"] == str(library.version)
    again = api.post("/items", json=[note], headers={"Zotero-Write-Token": "t" * 32})
    assert again.status_code == 412 and "Write token" in again.text
    stale = api.post("/items", json=[note], headers={"If-Unmodified-Since-Version": str(library.version - 1)})
    assert stale.status_code == 412 and "Library has been modified" in stale.text
    key = first.json()["success"]["0"]
    unversioned = api.post("/items", json=[{"key": key, "note": "y"}]).json()
    assert unversioned["failed"]["0"]["code"] == 428
    assert api.patch(f"/items/{key}", json={"note": "y"}).status_code == 428
    bad_field = api.post("/items", json=[{**note, "itemType": "conferencePaper", "color": "red"}]).json()
    assert bad_field["failed"]["0"]["code"] == 400 and "color" in bad_field["failed"]["0"]["message"]


def test_a_batch_bumps_the_version_once(api, zotero_server):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    before = library.version
    body = [{"itemType": "note", "note": str(n), "tags": [], "collections": [], "relations": {}} for n in range(3)]
    saved = api.post("/items", json=body).json()["successful"]
    assert library.version == before + 1
    assert {obj["version"] for obj in saved.values()} == {before + 1}


def test_keys_and_permissions(zotero_server):
    url = f"{zotero_server.url}/users/{ZOTERO_USER_ID}/items"
    assert httpx2.get(url, headers={"Zotero-API-Key": "nope"}).text == "Invalid key"
    assert httpx2.get(url).status_code == 403
    read_only = {"Authorization": f"Bearer {ZOTERO_READ_KEY}"}
    assert httpx2.get(url, headers=read_only).status_code == 200
    assert httpx2.post(url, json=[], headers=read_only).status_code == 403
    assert httpx2.get(f"{zotero_server.url}/users/1/items", headers=read_only).status_code == 403
    info = httpx2.get(f"{zotero_server.url}/keys/current", headers=read_only).json()
    assert info["userID"] == ZOTERO_USER_ID and info["access"]["user"]["write"] is False


def test_fault_switches(api, zotero_server):
    zotero_server.inject(429, times=2, headers={"Retry-After": "3"})
    assert [api.get("/items").status_code for _ in range(3)] == [429, 429, 200]
    zotero_server.inject(503, method="POST", headers={"Retry-After": "1"})
    assert api.get("/items").status_code == 200
    assert api.post("/items", json=[]).status_code == 503
    zotero_server.backoff_next = (1, "5")
    assert api.get("/items").headers["Backoff"] == "5"
    assert "Backoff" not in api.get("/items").headers
    zotero_server.fail_objects.append((500, "try again"))
    note = {"itemType": "note", "note": "x", "tags": [], "collections": [], "relations": {}}
    partial = api.post("/items", json=[note, note]).json()
    assert partial["failed"]["0"]["code"] == 500 and "1" in partial["success"]


def test_item_template_comes_from_the_schema(zotero_server):
    zot = zotero.Zotero(ZOTERO_USER_ID, "user", ZOTERO_WRITE_KEY)
    zot.endpoint = zotero_server.url
    template = zot.item_template("conferencePaper")
    assert {"proceedingsTitle", "conferenceName", "DOI", "creators", "tags", "collections"} <= set(template)


def test_the_fallback_preprint_fields_are_zoteros_schema(shared):
    """Without ../shared the fake Web API knows the preprint type from this list: it must be schema.json's."""
    import json

    from tests.zotero_server import PREPRINT_FIELDS

    schema = json.loads((shared / "fixtures" / "zotero-schema" / "schema.json").read_text(encoding="utf-8"))
    [preprint] = [kind for kind in schema["itemTypes"] if kind["itemType"] == "preprint"]
    assert {field["field"] for field in preprint["fields"]} == PREPRINT_FIELDS
