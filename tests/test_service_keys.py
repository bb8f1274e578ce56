"""The corpus services' keys (OpenAlex, NCBI) are read like the Zotero key: the environment, then the config's
table for the service, then the keyring; a broken table is one line; a config others can write is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zotero_bridge.zotero_api.credentials import CredentialsError
from zotero_bridge.zotero_api.service_keys import service_key


@pytest.fixture
def config(monkeypatch):
    import platformdirs

    for name in ("OPENALEX_API_KEY", "OPENALEX_EMAIL", "NCBI_API_KEY", "NCBI_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    path = Path(platformdirs.user_config_dir("zotrec")) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)

    def write(text: str, mode: int = 0o600) -> None:
        path.write_text(text)
        os.chmod(path, mode)

    return write


def test_the_environment_then_the_config_then_the_keyring(config, monkeypatch):
    import keyring

    monkeypatch.setattr(keyring, "get_password", lambda service, name: f"ring-{name}" if service == "zotrec" else None)
    assert service_key("openalex") == ("ring-openalex", None)
    config('[openalex]\napi_key = "from-config"\nemail = "me@example.org"\n[ncbi]\napi_key = "ncbi-config"\n')
    assert service_key("openalex") == ("from-config", "me@example.org")
    assert service_key("pubmed") == ("ncbi-config", None)
    monkeypatch.setenv("OPENALEX_API_KEY", "from-env")
    assert service_key("openalex") == ("from-env", "me@example.org")
    assert service_key("medrxiv") == (None, None)  # a service that needs none


def test_a_broken_table_is_one_line_and_a_config_others_may_write_is_refused(config):
    from recommender.store import NotPrivate

    config('openalex = "key"\n')
    with pytest.raises(CredentialsError, match=r"\[openalex\] must be a table"):
        service_key("openalex")
    config('[openalex]\napi_key = 12\n')
    with pytest.raises(CredentialsError, match="api_key must be a string"):
        service_key("openalex")
    config('[openalex]\napi_key = "k"\n', mode=0o666)
    with pytest.raises(NotPrivate):
        service_key("openalex")
