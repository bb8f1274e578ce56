"""The API keys of the corpus services that want one (OpenAlex; NCBI's E-utilities for PubMed), read like the
Zotero key: the environment, then the config file's table for the service, then the system keyring.

    OPENALEX_API_KEY / NCBI_API_KEY (and OPENALEX_EMAIL / NCBI_EMAIL, the contact the services ask for)
    config.toml:  [openalex] api_key = "…"  email = "…"      [ncbi] api_key = "…"  email = "…"
    keyring:      keyring set zotrec openalex   (or ncbi)

The recommender never imports this: the command line hands the key to the stream adapter (`use_key`). A key
is never printed or logged; the config file is read only when it is the user's own and private
(recommender.store.read_private).
"""

from __future__ import annotations

import logging
import os

from zotero_bridge.zotero_api.credentials import KEYRING_SERVICE, CredentialsError, config_path, read_config

log = logging.getLogger(__name__)

SERVICES = {"openalex": ("openalex", "OPENALEX_API_KEY", "OPENALEX_EMAIL"),
            "pubmed": ("ncbi", "NCBI_API_KEY", "NCBI_EMAIL")}  # stream prefix → config table, env names


def service_key(prefix: str) -> tuple[str | None, str | None]:
    """(API key, contact e-mail) for the stream `prefix` (openalex, pubmed); (None, None) for one that needs none."""
    if prefix not in SERVICES:
        return None, None
    table, key_env, email_env = SERVICES[prefix]
    key = os.environ.get(key_env, "").strip() or None
    email = os.environ.get(email_env, "").strip() or None
    if not (key and email):
        section = _config_table(table)
        key = key or section.get("api_key")
        email = email or section.get("email")
    return key or _keyring(table), email


def _config_table(table: str) -> dict[str, str]:
    path = config_path()
    raw = read_config(path)
    section = raw.get(table) if isinstance(raw, dict) else None
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise CredentialsError(f"{path}: [{table}] must be a table (api_key, email)")
    values = {}
    for name in ("api_key", "email"):
        value = section.get(name)
        if value is not None and not isinstance(value, str):
            raise CredentialsError(f"{path}: [{table}] {name} must be a string")
        if value and value.strip():
            values[name] = value.strip()
    return values


def _keyring(table: str) -> str | None:
    try:
        import keyring

        return keyring.get_password(KEYRING_SERVICE, table)
    except Exception as error:  # no backend, a locked keyring: the key is simply not there
        log.debug("keyring not available: %s", type(error).__name__)
        return None
