"""The e-mail digest sent by SMTP: STARTTLS (or TLS from the first byte), a login, never a password shown.

Settings: environment (ZOTREC_SMTP_HOST, _PORT, _USER, _PASSWORD, _CAFILE, _STARTTLS; ZOTREC_MAIL_FROM,
ZOTREC_MAIL_TO) over the `[mail]` table of zotrec's config.toml (host, port, user, from, to, starttls, ssl,
cafile), the password last of all from the system keyring (service "zotrec", user "smtp:USER@HOST"). A login
is only ever sent over TLS; plain SMTP (`starttls = false`) is for a relay on the loopback interface without a
login. The config is trusted like the Zotero keys are: refused when another user can write it, or when others
can read it and it holds the password. The conversation itself is bounded (`smtp.py`).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import smtplib
import ssl
import stat
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from recommender.formats.output import safe_text
from zotero_bridge.errors import BridgeError

log = logging.getLogger(__name__)

ENV = {"host": "ZOTREC_SMTP_HOST", "port": "ZOTREC_SMTP_PORT", "user": "ZOTREC_SMTP_USER",
       "password": "ZOTREC_SMTP_PASSWORD", "cafile": "ZOTREC_SMTP_CAFILE", "starttls": "ZOTREC_SMTP_STARTTLS",
       "ssl": "ZOTREC_SMTP_SSL", "from": "ZOTREC_MAIL_FROM", "to": "ZOTREC_MAIL_TO"}
KEYRING_SERVICE = "zotrec"


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
    timeout: float = 30.0  # one step (connect, one reply); the whole conversation has smtp.CONVERSATION_SECONDS


def mail_settings(to: Sequence[str] = (), config: dict | None = None) -> MailSettings:
    """The SMTP settings from the environment, the config file's [mail] table and the keyring; one line names
    what is missing or wrong, and the setting it came from."""
    table = _config_table() if config is None else config
    value, where = {}, {}
    for key, name in ENV.items():
        given = os.environ.get(name, "").strip()
        kept = table.get(key, "")
        kept = (("1" if kept else "0") if isinstance(kept, bool) else ", ".join(map(str, kept))
                if isinstance(kept, list) else str(kept if kept is not None else "").strip())  # to = ["a@…", …]
        value[key] = given or kept
        where[key] = name if given or not kept else f"{key} in the [mail] table"
    recipients = tuple(to) or tuple(a.strip() for a in value["to"].split(",") if a.strip())
    if not value["host"]:
        raise MailError(f"no SMTP server: set {ENV['host']} (or host in the [mail] table of the config file)")
    if not recipients:
        raise MailError(f"no recipient: give --mail-to ADDRESS or set {ENV['to']}")
    _check_host(value["host"], where["host"])
    secure_ssl = _flag(value["ssl"], False)
    try:
        port = int(value["port"] or (465 if secure_ssl else 587))
    except ValueError:
        raise MailError(f"{where['port']}: '{value['port']}' is not a port number") from None
    if not 1 <= port <= 65535:
        raise MailError(f"{where['port']}: {port} is not a port number (1–65535)")
    if value["cafile"] and not os.path.isfile(os.path.expanduser(value["cafile"])):
        raise MailError(f"{where['cafile']}: no such file: {value['cafile']}")
    password = value["password"] or (_keyring_password(value["user"], value["host"]) if value["user"] else "")
    settings = MailSettings(host=value["host"], port=port, user=value["user"], password=password or "",
                            sender=value["from"] or value["user"] or f"zotrec@{value['host']}", to=recipients,
                            starttls=_flag(value["starttls"], True), ssl=secure_ssl,
                            cafile=os.path.expanduser(value["cafile"]))
    if settings.user and not (settings.starttls or settings.ssl):
        raise MailError(f"{settings.host}: a login is only sent over TLS; turn STARTTLS on ({ENV['starttls']}=1)")
    if not (settings.starttls or settings.ssl) and not _loopback(settings.host):
        raise MailError(f"{settings.host}: mail leaves this computer only over TLS (set {ENV['starttls']}=1); "
                        "plain SMTP is for a relay on the loopback interface (localhost, 127.0.0.1, ::1)")
    return settings


def _check_host(host: str, where: str) -> None:
    """A host name the resolver can be asked at all (a label over 63 characters is an idna error there)."""
    try:
        host.encode("idna")
    except UnicodeError as error:
        raise MailError(f"{where}: '{host[:80]}' is not a host name ({error})") from None


def _loopback(host: str) -> bool:
    """localhost or an address on the loopback interface (127.0.0.0/8, ::1): mail that never leaves here."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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
    message["Subject"] = " ".join(safe_text(subject).split())  # no header injection, no terminal escape
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
    """Send `message` in one bounded conversation; every failure is one MailError line naming the server (and,
    for a host or port that answers nothing, the settings)."""
    from zotero_bridge.deliver.smtp import BoundedSMTP, BoundedSMTPSSL, ReplyLimit, connection_problem

    try:
        context = ssl.create_default_context(cafile=settings.cafile or None)
    except (OSError, ssl.SSLError) as error:
        raise MailError(f"{ENV['cafile']}: {settings.cafile}: not a file of CA certificates "
                        f"({getattr(error, 'strerror', None) or error})") from None
    where = f"{settings.host}:{settings.port}"
    try:
        if settings.ssl:
            client = BoundedSMTPSSL(settings.host, settings.port, timeout=settings.timeout, context=context)
        else:
            client = BoundedSMTP(settings.host, settings.port, timeout=settings.timeout)
        with client:
            client.ehlo()
            if settings.starttls and not settings.ssl:
                client.starttls(context=context)
                client.ehlo()
            if settings.user:
                client.login(settings.user, settings.password)
            refused = client.send_message(message)
    except ReplyLimit as error:
        raise MailError(f"{where}: the server {error.what}; nothing was sent") from None
    except smtplib.SMTPAuthenticationError as error:
        raise MailError(f"{where}: the server refused the login of {settings.user} ({error.smtp_code})") from None
    except smtplib.SMTPNotSupportedError:
        raise MailError(f"{where}: the server does not offer STARTTLS; nothing was sent (a relay on this "
                        f"computer without TLS: starttls = false in [mail], or {ENV['starttls']}=0)") from None
    except UnicodeError as error:  # a host name the resolver refuses
        raise MailError(f"{where}: not a host name ({error}); check {ENV['host']}") from None
    except (smtplib.SMTPException, ssl.SSLError, OSError) as error:
        problem = connection_problem(error) if isinstance(error, OSError) else None
        if problem:
            raise MailError(f"{where}: {problem}; check {ENV['host']} and {ENV['port']} "
                            "(or host and port in [mail]); nothing was sent") from None
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
    """The config's [mail] table, trusted like the Zotero keys: another user's file, or one others may write,
    is refused (it could send the mail and the password elsewhere), and so is one others may read that holds
    the password."""
    from recommender.store import NotPrivate, read_private
    from zotero_bridge.zotero_api.credentials import config_path

    path = config_path()
    if path.suffix != ".toml" or path.is_dir():
        return {}
    try:
        data = read_private(path, "config file")
        if data is None:
            return {}
        table = tomllib.loads(data.decode("utf-8")).get("mail", {})
    except NotPrivate:
        raise
    except (OSError, ValueError) as error:
        raise MailError(f"{path}: cannot read the config file ({str(error).splitlines()[0]})") from None
    if not isinstance(table, dict):
        raise MailError(f"{path}: [mail] must be a table (host, port, user, from, to, starttls)")
    if "password" in table:
        if os.name == "posix" and path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise MailError(f"{path}: holds the SMTP password but others can read it; refusing to use it "
                            f"(chmod 600 {path}, or keep the password in the keyring)")
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
