"""`--library zotero:web`: pyzotero over real HTTP to the fake API; incremental cache, credentials, faults."""

from __future__ import annotations

import json
import logging
import os
import stat

import pytest
from click.testing import CliRunner

from recommender.retry import RetryPolicy
from zotero_bridge.cli.main import cli
from zotero_bridge.errors import BridgeError
from zotero_bridge.sources import SourceOptions, read_library
from zotero_bridge.zotero_api.client import ZoteroBusyError
from zotero_bridge.zotero_api.credentials import CredentialsError, redact, resolve_credentials, save_config

from .conftest import ZOTERO_GROUP_ID, ZOTERO_USER_ID, ZOTERO_WRITE_KEY


class SleepRecorder:
    """Stands in for time.sleep: remembers each wait instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


def options_for(server, sleeps=None, key=ZOTERO_WRITE_KEY, **kwargs) -> SourceOptions:
    policy = RetryPolicy(sleep=sleeps or SleepRecorder(), max_wait_s=60)
    return SourceOptions(library_id=str(kwargs.pop("library_id", ZOTERO_USER_ID)), api_key=key,
                         endpoint=server.url, extra={"retry_policy": policy}, **kwargs)


def test_first_read_items_collections_and_what_was_skipped(zotero_server):
    read = read_library(["zotero:web"], options_for(zotero_server))
    titles = {item.title for item in read.items}
    assert len(read.items) == 20 and "Sherlock Holmes in Babylon" in titles
    assert "A paper the user threw away" not in titles
    assert [s.reason for s in read.skipped] == ["note"]  # the standalone note; the attachment is a child
    films = next(item for item in read.items if item.item_type == "artwork")
    assert set(films.collections) == {"Non-English items", "Non-English items/sherlock films", "Sherlock Holmes"}
    assert read.stats["requests"] == 4  # a page of items, one of collections, and their versions (the snapshot check)


def test_unchanged_library_costs_one_request(zotero_server):
    options = options_for(zotero_server)
    first = read_library(["zotero:web"], options)
    again = read_library(["zotero:web"], options)
    assert again.stats["requests"] == 1
    assert [item.key for item in again.items] == [item.key for item in first.items]


def test_changes_trash_and_deletions_are_picked_up(zotero_server):
    options = options_for(zotero_server)
    read_library(["zotero:web"], options)
    library = zotero_server.library("user", ZOTERO_USER_ID)
    keys = [k for k, v in library.items.items() if v["itemType"] == "book"]
    zotero_server.edit_item(library, keys[0], title="Edited in another client")
    zotero_server.edit_item(library, keys[1], deleted=1)
    zotero_server.delete_item(library, keys[2])
    added = zotero_server.add_item(library, title="Fresh paper on diffusion models")
    requests_before = len(zotero_server.requests)
    read = read_library(["zotero:web"], options)
    by_key = {item.key: item for item in read.items}
    assert by_key[keys[0]].title == "Edited in another client"
    assert keys[1] not in by_key and keys[2] not in by_key and added in by_key
    assert len(read.items) == 20 - 2 + 1
    asked = [path for _, path in zotero_server.requests[requests_before:]]
    assert "format=versions" in asked[0] and "since=" in asked[0]
    assert any("/deleted?since=" in path for path in asked) and read.stats["requests"] == 4


def test_group_library(zotero_server):
    group = zotero_server.library("group", ZOTERO_GROUP_ID)
    zotero_server.add_item(group, title="Group paper", abstractNote="Shared by the lab.")
    read = read_library([f"zotero:web:group:{ZOTERO_GROUP_ID}"], options_for(zotero_server))
    assert [item.title for item in read.items] == ["Group paper"]
    assert read.items[0].library == f"group library {ZOTERO_GROUP_ID}"


def test_invalid_key_says_so_and_names_the_library(zotero_server):
    with pytest.raises(BridgeError) as caught:
        read_library(["zotero:web"], options_for(zotero_server, key="wrong-key-123456"))
    message = str(caught.value)
    assert "refused the API key" in message and f"user library {ZOTERO_USER_ID}" in message
    assert "wrong-key-123456" not in message


def test_missing_library_id(zotero_server):
    with pytest.raises(CredentialsError, match="no Zotero user library id.*ZOTERO_LIBRARY_ID"):
        read_library(["zotero:web"], SourceOptions(api_key=ZOTERO_WRITE_KEY, endpoint=zotero_server.url))


def test_429_storm_waits_as_asked_and_keeps_going(zotero_server, sleeps, caplog):
    zotero_server.inject(429, times=4, headers={"Retry-After": "7"})
    with caplog.at_level(logging.INFO):
        read = read_library(["zotero:web"], options_for(zotero_server, sleeps))
    assert len(read.items) == 20
    assert len(sleeps.waits) == 4 and all(6 < wait <= 7 for wait in sleeps.waits)
    assert "waiting" in caplog.text  # progress stays visible


def test_endless_429_gives_up_after_bounded_tries(zotero_server, sleeps):
    zotero_server.inject(429, times=10_000, headers={"Retry-After": "2"})
    with pytest.raises(ZoteroBusyError, match="gave up after 5 tries"):
        read_library(["zotero:web"], options_for(zotero_server, sleeps))
    assert 5 <= len(sleeps.waits) <= 20 and sum(sleeps.waits) <= 40


def test_a_wait_longer_than_the_limit_stops_at_once(zotero_server, sleeps):
    zotero_server.inject(503, times=1, headers={"Retry-After": "3600"})
    with pytest.raises(ZoteroBusyError, match="asked zotrec to wait 3600 s"):
        read_library(["zotero:web"], options_for(zotero_server, sleeps))
    assert sleeps.waits == []


def test_5xx_then_success(zotero_server, sleeps):
    zotero_server.inject(500, times=2)
    read = read_library(["zotero:web"], options_for(zotero_server, sleeps))
    assert len(read.items) == 20 and len(sleeps.waits) == 2  # growing waits when no Retry-After came
    assert sleeps.waits[1] > sleeps.waits[0]


def test_backoff_on_success_delays_the_next_request(zotero_server, sleeps):
    zotero_server.backoff_next = (1, "4")
    read_library(["zotero:web"], options_for(zotero_server, sleeps))
    assert len(sleeps.waits) == 1 and 3 < sleeps.waits[0] <= 4


def test_backoff_as_an_http_date_is_honoured(zotero_server, sleeps):
    """pyzotero reads Backoff with float(): an HTTP date was 'not Zotero API data'; it is the wait it names."""
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    zotero_server.backoff_next = (1, format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True))
    assert len(read_library(["zotero:web"], options_for(zotero_server, sleeps)).items) == 20
    assert len(sleeps.waits) == 1 and 15 < sleeps.waits[0] <= 20


def test_a_broken_cache_is_rebuilt(zotero_server, tmp_path, caplog):
    options = options_for(zotero_server, cache_dir=tmp_path)
    read_library(["zotero:web"], options)
    for path in tmp_path.glob("*.sqlite"):
        path.write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING):
        read = read_library(["zotero:web"], options)
    assert len(read.items) == 20 and "could not be read" in caplog.text


def test_credentials_come_from_option_env_config_then_keyring(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for name in ("ZOTERO_LIBRARY_ID", "ZOTERO_LIBRARY_TYPE", "ZOTERO_API_KEY", "ZOTERO_API_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    config.write_text('library_id = "11"\napi_key = "from-config"\nlibrary_type = "group"\n', encoding="utf-8")
    assert resolve_credentials(config=config).api_key == "from-config"
    monkeypatch.setenv("ZOTERO_API_KEY", "from-env")
    found = resolve_credentials(config=config)
    assert (found.library_id, found.library_type, found.api_key) == ("11", "group", "from-env")
    assert resolve_credentials(api_key="from-option", config=config).api_key == "from-option"
    monkeypatch.delenv("ZOTERO_API_KEY")
    config.write_text('library_id = "11"\n', encoding="utf-8")
    import keyring

    monkeypatch.setattr(keyring, "get_password", lambda service, name: "from-keyring" if name == "user:11" else None)
    assert resolve_credentials(config=config).api_key == "from-keyring"
    assert "from-keyring" not in repr(resolve_credentials(config=config))


def test_json_config_and_bad_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"zotero": {"library_id": 5, "endpoint": "http://localhost:9"}}), encoding="utf-8")
    assert resolve_credentials(config=path).endpoint == "http://localhost:9"
    path.write_text("{broken", encoding="utf-8")
    with pytest.raises(CredentialsError, match="config.json: cannot read"):
        resolve_credentials(config=path)


def test_saved_config_is_private(tmp_path):
    path = save_config({"library_id": "7", "api_key": 'se"cret'}, tmp_path / "zotrec" / "config.toml")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert resolve_credentials(config=path).api_key == 'se"cret'


def test_redact_masks_keys_in_any_shape():
    text = "GET /items?key=abc123&x=1 Authorization: Bearer abc123 Zotero-API-Key: abc123 then abc123"
    assert "abc123" not in redact(text, "abc123")
    assert "zzz" not in redact("Authorization: Bearer zzz")


def test_library_command_reads_the_web_api(zotero_server):
    args = ["library", "--library", "zotero:web", "--library-id", str(ZOTERO_USER_ID),
            "--endpoint", zotero_server.url, "--format", "json"]
    result = CliRunner().invoke(cli, args, env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert result.exit_code == 0, result.output
    assert ZOTERO_WRITE_KEY not in result.output
    assert "Sherlock Holmes in Babylon" in result.output
