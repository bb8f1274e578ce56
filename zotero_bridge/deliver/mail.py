"""The e-mail digest sent by SMTP: STARTTLS (or TLS from the first byte), a login, never a password shown.

Settings: environment (ZOTREC_SMTP_HOST, _PORT, _USER, _PASSWORD, _CAFILE, _STARTTLS; ZOTREC_MAIL_FROM,
ZOTREC_MAIL_TO) over the `[mail]` table of zotrec's config.toml (host, port, user, from, to, starttls, ssl,
cafile), the password last of all from the system keyring (service "zotrec", user "smtp:USER@HOST"). A login
is only ever sent over TLS; plain SMTP is for a server on this computer without a login.
"""

from __future__ import annotations

import logging
import os
import smtplib
import ssl
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from zotero_bridge.errors import BridgeError

log = logging.getLogger(__name__)

ENV = {"host": "ZOTREC_SMTP_HOST", "port": "ZOTREC_SMTP_PORT", "user": "ZOTREC_SMTP_USER",
       "password": "ZOTREC_SMTP_PASSWORD", "cafile": "ZOTREC_SMTP_CAFILE", "starttls": "ZOTREC_SMTP_STARTTLS",
       "ssl": "ZOTREC_SMTP_SSL", "from": "ZOTREC_MAIL_FROM", "to": "ZOTREC_MAIL_TO"}
KEYRING_SERVICE = "zotrec"
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class MailError(BridgeError):
    """The digest could not be sent (the message names the server, never the password)."""


@dataclass(frozen=True)
class MailSettings:
    host: str
    sender: str
    to: tuple[str, ...]
    port: int = 587
    user: str = ""
    password: str = field(default="", repr=False)
    starttls: bool = True
    ssl: bool = False
    cafile: str = ""
    timeout: float = 60.0


def mail_settings(to: Sequence[str] = (), config: dict | None = None) -> MailSettings:
    """The SMTP settings from the environment, the config file's [mail] table and the keyring; one line names
    what is missing."""
    table = _config_table() if config is None else config
    value = {key: os.environ.get(name, "").strip() or str(table.get(key, "") or "").strip()
             for key, name in ENV.items()}
    recipients = tuple(to) or tuple(a.strip() for a in value["to"].split(",") if a.strip())
    if not value["host"]:
        raise MailError(f"no SMTP server: set {ENV['host']} (or host in the [mail] table of the config file)")
    if not recipients:
        raise MailError(f"no recipient: give --mail-to ADDRESS or set {ENV['to']}")
    secure_ssl = _flag(value["ssl"], False)
    try:
        port = int(value["port"] or (465 if secure_ssl else 587))
    except ValueError:
        raise MailError(f"{ENV['port']}: '{value['port']}' is not a port number") from None
    password = value["password"] or (_keyring_password(value["user"], value["host"]) if value["user"] else "")
    settings = MailSettings(host=value["host"], port=port, user=value["user"], password=password or "",
                            sender=value["from"] or value["user"] or f"zotrec@{value['host']}", to=recipients,
                            starttls=_flag(value["starttls"], True), ssl=secure_ssl, cafile=value["cafile"])
    if settings.user and not (settings.starttls or settings.ssl):
        raise MailError(f"{settings.host}: a login is only sent over TLS; turn STARTTLS on ({ENV['starttls']}=1)")
    if not (settings.starttls or settings.ssl) and settings.host not in _LOOPBACK:
        raise MailError(f"{settings.host}: mail leaves this computer only over TLS (set {ENV['starttls']}=1)")
    return settings


def send_digest(recs, title: str, context, to: Sequence[str] = (), seen_hint: str = "") -> MailSettings:
    """Send the list as a digest (plain text and HTML: the same papers, reasons and links; render/digest.py);
    returns where. `seen_hint`: the running command's advice on papers left out as seen."""
    from zotero_bridge.render.digest import digest_header, digest_html, digest_text

    settings = mail_settings(to)
    header = digest_header(context, seen_hint=seen_hint)
    text = digest_text(recs, title, header)
    html = digest_html(recs, title, header, subtitle=context.created)
    send(build_message(f"{title} · {context.created}", text, html, settings), settings)
    return settings


def build_message(subject: str, text: str, html: str, settings: MailSettings) -> EmailMessage:
    """A multipart/alternative message: the plain text first, the HTML as the richer part."""
    message = EmailMessage()
    message["Subject"] = " ".join(subject.split())  # no header injection through a line break
    try:
        message["From"] = settings.sender
        message["To"] = ", ".join(settings.to)
    except ValueError as error:  # a line break or a malformed address in the settings
        raise MailError(f"the sender or a recipient is not an address ({error})") from None
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = make_msgid(domain="zotrec.invalid")
    message.set_content(text)
    message.add_alternative(html, subtype="html")
    return message


def send(message: EmailMessage, settings: MailSettings) -> None:
    """Send `message`; every failure is one MailError line naming the server."""
    context = ssl.create_default_context(cafile=settings.cafile or None)
    where = f"{settings.host}:{settings.port}"
    try:
        if settings.ssl:
            client = smtplib.SMTP_SSL(settings.host, settings.port, timeout=settings.timeout, context=context)
        else:
            client = smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout)
        with client:
            client.ehlo()
            if settings.starttls and not settings.ssl:
                client.starttls(context=context)
                client.ehlo()
            if settings.user:
                client.login(settings.user, settings.password)
            refused = client.send_message(message)
    except smtplib.SMTPAuthenticationError as error:
        raise MailError(f"{where}: the server refused the login of {settings.user} ({error.smtp_code})") from None
    except smtplib.SMTPNotSupportedError:
        raise MailError(f"{where}: the server does not offer STARTTLS; nothing was sent") from None
    except (smtplib.SMTPException, ssl.SSLError, OSError) as error:
        raise MailError(f"{where}: {_redacted(error, settings.password)}; nothing was sent") from None
    if refused:
        log.warning("%s refused %s", where, ", ".join(sorted(refused)))


def _redacted(error: Exception, password: str) -> str:
    text = f"{type(error).__name__}: {error}".splitlines()[0][:200]
    return text.replace(password, "[redacted]") if password else text


def _flag(value: str, default: bool) -> bool:
    if not value:
        return default
    return value.lower() not in ("0", "false", "no", "off")


def _config_table() -> dict:
    from zotero_bridge.zotero_api.credentials import config_path

    path = config_path()
    if not path.is_file() or path.suffix != ".toml":
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("mail", {})
    except (OSError, ValueError) as error:
        raise MailError(f"{path}: cannot read the config file ({str(error).splitlines()[0]})") from None
    if not isinstance(table, dict):
        raise MailError(f"{path}: [mail] must be a table (host, port, user, from, to, starttls)")
    if "password" in table:
        log.warning("%s holds the SMTP password; the keyring keeps it better: keyring set %s smtp:USER@HOST",
                    path, KEYRING_SERVICE)
    return table


def _keyring_password(user: str, host: str) -> str | None:
    try:
        import keyring

        return keyring.get_password(KEYRING_SERVICE, f"smtp:{user}@{host}")
    except Exception as error:  # noqa: BLE001 - no backend or a locked keyring: the password is simply not there
        log.debug("keyring not available: %s", type(error).__name__)
        return None
