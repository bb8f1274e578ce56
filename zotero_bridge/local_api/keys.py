"""Local API keys, one per Zotero-Server-ID (one per Zotero database): the system keyring, else a 0600 file.

A key from "Always Allow" is kept so later syncs do not ask again; it is never printed or logged. It is
unrelated to zotero.org API keys and only opens the one database whose server id it is stored under.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

KEYRING_SERVICE = "zotrec-local-api"


def key_file() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("zotrec")) / "local-api-keys.json"


class KeyStore:
    """get / put / forget the key of one server id; the keyring when it works, else `path` (mode 0600)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else key_file()

    def get(self, server_id: str) -> str | None:
        key = self._keyring("get_password", server_id)
        return key or self._read().get(server_id)

    def put(self, server_id: str, key: str) -> None:
        if self._keyring("set_password", server_id, key) is not False:
            self._write({k: v for k, v in self._read().items() if k != server_id})
            return
        self._write({**self._read(), server_id: key})

    def forget(self, server_id: str) -> None:
        self._keyring("delete_password", server_id)
        stored = self._read()
        if server_id in stored:
            self._write({k: v for k, v in stored.items() if k != server_id})

    def _keyring(self, call: str, *args: str):
        """The keyring's answer, or False when no usable keyring is installed (null backend, D-Bus trouble)."""
        try:
            import keyring
            from keyring.backends import fail, null

            if isinstance(keyring.get_keyring(), (fail.Keyring, null.Keyring)):
                return False
            return getattr(keyring, call)(KEYRING_SERVICE, *args)
        except Exception as error:  # a locked or broken keyring: fall back to the file
            log.debug("keyring not usable: %s", type(error).__name__)
            return False

    def _read(self) -> dict[str, str]:
        """The stored keys; a key file of another user, or one others may write, is refused (NotPrivate)."""
        from recommender.store import NotPrivate, read_private

        try:
            raw = read_private(self.path, "local API key file")
            data = json.loads(raw.decode("utf-8")) if raw is not None else {}
        except NotPrivate:
            raise
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _write(self, keys: dict[str, str]) -> None:
        if not keys and not self.path.exists():
            return
        from recommender.store import private_dir, write_bytes

        private_dir(self.path.parent)  # 0700 whatever the umask
        write_bytes(self.path, json.dumps(keys).encode("utf-8"), durable=True)  # 0600, never through a link
