"""Where the Zotero library id, type, API key and endpoint come from, and keeping the key out of output.

Order: command-line option > environment variable > config file in the user config dir (TOML or JSON) >
the system keyring (API key only). The config file is written 0600; the key is never printed or logged.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zotero_bridge.errors import BridgeError

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://api.zotero.org"
KEYRING_SERVICE = "zotrec"
ENV = {"library_id": "ZOTERO_LIBRARY_ID", "library_type": "ZOTERO_LIBRARY_TYPE", "api_key": "ZOTERO_API_KEY",
       "endpoint": "ZOTERO_API_ENDPOINT"}
CONFIG_KEYS = tuple(ENV)
LIBRARY_TYPES = ("user", "group")
MASK = "[redacted]"


class CredentialsError(BridgeError):
    """The library id/type/key are missing or the config file is broken."""


@dataclass(frozen=True)
class Credentials:
    """Everything needed to reach one Zotero library through the Web API."""

    library_id: str
    library_type: str = "user"
    api_key: str | None = field(default=None, repr=False)
    endpoint: str = DEFAULT_ENDPOINT

    def describe(self) -> str:
        """'user library 12345' — for messages (never includes the key)."""
        return f"{self.library_type} library {self.library_id}"


def config_path() -> Path:
    """config.toml in the user config dir, or config.json if only that one exists."""
    import platformdirs

    folder = Path(platformdirs.user_config_dir("zotrec"))
    toml_path = folder / "config.toml"
    json_path = folder / "config.json"
    return json_path if json_path.exists() and not toml_path.exists() else toml_path


def read_config(path: Path | None = None) -> Any:
    """The whole config file as TOML (or JSON) reads it (None if there is none); a broken file names itself.
    A config of another user, or one others may write, is refused (NotPrivate): it could send a key elsewhere."""
    from recommender.store import NotPrivate, read_private

    path = path or config_path()
    if path.is_dir():
        return None
    try:
        data = read_private(path, "config file")
        if data is None:
            return None
        text = data.decode("utf-8")
        return json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except NotPrivate:
        raise
    except (OSError, ValueError) as error:
        raise CredentialsError(f"{path}: cannot read the config file ({_first_line(error)})") from None


def load_config(path: Path | None = None) -> dict[str, str]:
    """The zotero settings in the config file ({} if there is none); see read_config."""
    path = path or config_path()
    raw = read_config(path)
    if raw is None:
        return {}
    section = raw.get("zotero", raw) if isinstance(raw, dict) else None
    if not isinstance(section, dict):
        raise CredentialsError(f"{path}: expected a table of settings ({', '.join(CONFIG_KEYS)})")
    values = {}
    for name in CONFIG_KEYS:
        value = section.get(name)
        if value is None:
            continue
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise CredentialsError(f"{path}: '{name}' must be a string")
        values[name] = str(value)
    if "api_key" in values and os.name == "posix" and path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("%s holds an API key but others can read it; run: chmod 600 %s", path, path)
    return values


def save_config(values: dict[str, str | None], path: Path | None = None) -> Path:
    """Write (merge) settings into the TOML config, created with mode 0600 so only the user can read it."""
    path = path or config_path()
    if path.suffix == ".json":
        path = path.with_suffix(".toml")
    merged = {**load_config(path), **{k: str(v) for k, v in values.items() if v and k in CONFIG_KEYS}}
    text = "".join(f"{name} = {json.dumps(value, ensure_ascii=False)}\n" for name, value in merged.items())
    from recommender.store import private_dir, write_bytes

    private_dir(path.parent)  # 0700 whatever the umask; another user's folder is refused
    write_bytes(path, text.encode("utf-8"), durable=True)  # a fresh 0600 file, never through a link
    return path


def resolve_credentials(
    library_id: str | None = None,
    library_type: str | None = None,
    api_key: str | None = None,
    endpoint: str | None = None,
    *,
    config: Path | None = None,
) -> Credentials:
    """Fill each setting from the first place that has it; raise a one-line error naming what is missing."""
    given = {"library_id": library_id, "library_type": library_type, "api_key": api_key, "endpoint": endpoint}
    settings = {name: value or os.environ.get(ENV[name]) or None for name, value in given.items()}
    if not all(settings.values()):
        for name, value in load_config(config).items():
            settings[name] = settings[name] or value
    library_type = (settings["library_type"] or "user").strip().lower()
    if library_type not in LIBRARY_TYPES:
        raise CredentialsError(f"library type must be 'user' or 'group', not '{library_type}'")
    library_id = (settings["library_id"] or "").strip()
    if not library_id:
        raise CredentialsError(
            f"no Zotero {library_type} library id: pass --library-id, set ZOTERO_LIBRARY_ID, or add "
            f"library_id to {config or config_path()} (your user id is on https://www.zotero.org/settings/keys)")
    if not library_id.isdigit():
        raise CredentialsError(f"the Zotero library id must be a number, not '{library_id}'")
    endpoint = (settings["endpoint"] or DEFAULT_ENDPOINT).strip().rstrip("/")
    if not re.match(r"^https?://[^/\s]+", endpoint):
        raise CredentialsError(f"the Zotero endpoint must be an http(s) URL, not '{redact(endpoint)}'")
    key = settings["api_key"] or _keyring_key(library_type, library_id)
    return Credentials(library_id, library_type, key, endpoint)


def _keyring_key(library_type: str, library_id: str) -> str | None:
    """The key stored with `keyring set zotrec user:<id>` (or `zotrec api_key`), if a keyring is usable."""
    try:
        import keyring

        return (keyring.get_password(KEYRING_SERVICE, f"{library_type}:{library_id}")
                or keyring.get_password(KEYRING_SERVICE, "api_key"))
    except Exception as error:  # no backend, locked keyring, D-Bus trouble: the key is simply not there
        log.debug("keyring not available: %s", type(error).__name__)
        return None


_SECRET_PATTERNS = (re.compile(r"(Bearer\s+)\S+", re.I), re.compile(r"((?:api_?key|key)=)[^&\s]+", re.I),
                    re.compile(r"(Zotero-API-Key:\s*)\S+", re.I))


def redact(text: object, *secrets: str | None) -> str:
    """`text` with every given secret and anything that looks like a key in a header or URL masked."""
    result = str(text)
    for secret in secrets:
        if secret:
            result = result.replace(secret, MASK)
    for pattern in _SECRET_PATTERNS:
        result = pattern.sub(lambda match: match.group(1) + MASK, result)
    return result


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def describe_config(values: dict[str, Any]) -> dict[str, Any]:
    """Settings safe to show: the key replaced by a mask."""
    return {name: (MASK if name == "api_key" and value else value) for name, value in values.items()}
