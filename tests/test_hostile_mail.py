"""The e-mail digest against hostile SMTP servers and settings on 127.0.0.1 (issue 42 "Mail", issue 38 "Local
relays"): replies bounded in bytes and time, ports and hosts checked, and the config's [mail] table trusted only
as the Zotero keys are. The servers are tests/hostile_smtp.py (raw sockets) and aiosmtpd (a real relay)."""

from __future__ import annotations

import email
import os
import socket
import time
from email import policy
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hostile_smtp import HostileSMTP
from tests.test_delivery import LIBRARY, corpus  # noqa: F401 - the corpus fixture
from zotero_bridge.cli.main import cli
from zotero_bridge.deliver.mail import MailError, MailSettings, build_message, mail_settings, send


def _send_to(port: int, **settings) -> float:
    """Send one small message to 127.0.0.1:port without TLS; the seconds it took to fail."""
    options = {"host": "127.0.0.1", "port": port, "sender": "z@example.org", "to": ("me@example.org",),
               "starttls": False, **settings}
    chosen = MailSettings(**options)
    started = time.monotonic()
    with pytest.raises(MailError) as caught:
        send(build_message("s", "text", "<p>html</p>", chosen), chosen)
    _send_to.error = str(caught.value)
    return time.monotonic() - started


def test_an_endless_multi_line_reply_stops_at_the_byte_cap():
    with HostileSMTP("endless-reply") as server:
        took = _send_to(server.port)
    assert "sent more than 64 KiB of replies; nothing was sent" in _send_to.error, _send_to.error
    assert took < 5 and "\n" not in _send_to.error


@pytest.mark.parametrize("behaviour", ["slow-banner", "drip"])
def test_a_banner_that_never_ends_stops_at_the_conversation_deadline(behaviour, monkeypatch):
    monkeypatch.setattr("zotero_bridge.deliver.smtp.CONVERSATION_SECONDS", 1.5)
    with HostileSMTP(behaviour, interval=0.2) as server:
        took = _send_to(server.port)  # each line or byte comes well within the 60 s a step may take
    assert "did not finish within 1.5 s; nothing was sent" in _send_to.error, _send_to.error
    assert took < 4


def _mail_env(monkeypatch, **values) -> None:
    for name in ("ZOTREC_SMTP_USER", "ZOTREC_SMTP_PASSWORD", "ZOTREC_SMTP_CAFILE", "ZOTREC_SMTP_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for name, value in {"ZOTREC_SMTP_HOST": "127.0.0.1", "ZOTREC_MAIL_FROM": "z@example.org", **values}.items():
        monkeypatch.setenv(name, value)


def _digest(corpus_path: str) -> str:
    result = CliRunner().invoke(cli, ["reading-list", "--library", LIBRARY, "--corpus", corpus_path, "-n", "2",
                                      "--features", "tfidf", "--mail-to", "me@example.org"])
    assert result.exit_code == 1, result.output
    assert "zotrec hit a bug" not in result.output and "Traceback" not in result.output
    [line] = [line for line in result.output.splitlines() if line.startswith("Error:")]
    return line


def test_a_port_out_of_range_is_refused_before_any_connection(corpus, monkeypatch):  # noqa: F811
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", 70000 & 0xFFFF))  # where Python's socket would take port 70000 (4464)
        listener.listen(1)
        listener.settimeout(0.2)
    except OSError:
        listener.close()
        listener = None
    _mail_env(monkeypatch, ZOTREC_SMTP_PORT="70000", ZOTREC_SMTP_STARTTLS="0")
    line = _digest(corpus)
    assert "ZOTREC_SMTP_PORT: 70000 is not a port number (1–65535)" in line, line
    if listener is not None:
        with pytest.raises(OSError):  # a timeout: nobody knocked
            listener.accept()
        listener.close()


def test_a_host_label_over_63_characters_is_one_line_naming_the_setting(corpus, monkeypatch):  # noqa: F811
    _mail_env(monkeypatch, ZOTREC_SMTP_HOST="a" * 64 + ".example.org")
    assert "ZOTREC_SMTP_HOST: 'aaaa" in _digest(corpus)


def test_a_port_where_nothing_answers_names_the_settings(corpus, monkeypatch):  # noqa: F811
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    _mail_env(monkeypatch, ZOTREC_SMTP_PORT=str(port), ZOTREC_SMTP_STARTTLS="0")
    line = _digest(corpus)
    assert f"127.0.0.1:{port}: nothing answers on that port (connection refused); check ZOTREC_SMTP_HOST and " \
           "ZOTREC_SMTP_PORT" in line, line


def test_a_missing_cafile_is_named(corpus, monkeypatch, tmp_path):  # noqa: F811
    missing = tmp_path / "no-such-ca.pem"
    _mail_env(monkeypatch, ZOTREC_SMTP_CAFILE=str(missing))
    assert f"ZOTREC_SMTP_CAFILE: no such file: {missing}" in _digest(corpus)


@pytest.fixture
def relay(monkeypatch):
    """aiosmtpd without TLS on 127.0.0.1: a local relay (postfix, an SSH tunnel) that offers no STARTTLS."""
    from aiosmtpd.controller import Controller

    class Inbox:
        async def handle_DATA(self, server, session, envelope):
            self.messages.append(envelope)
            return "250 Message accepted"

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    inbox.messages = []
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    inbox.port = port
    yield inbox
    controller.stop()


def _config(text: str, mode: int) -> Path:
    from zotero_bridge.zotero_api.credentials import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)
    return path


def test_starttls_false_in_the_config_sends_through_a_loopback_relay(corpus, relay, monkeypatch):  # noqa: F811
    for name in ("ZOTREC_SMTP_HOST", "ZOTREC_SMTP_PORT", "ZOTREC_SMTP_STARTTLS", "ZOTREC_SMTP_USER",
                 "ZOTREC_SMTP_PASSWORD", "ZOTREC_SMTP_CAFILE", "ZOTREC_MAIL_FROM", "ZOTREC_MAIL_TO"):
        monkeypatch.delenv(name, raising=False)
    _config(f'[mail]\nhost = "127.0.0.1"\nport = {relay.port}\nstarttls = false\nto = "me@example.org"\n', 0o600)
    result = CliRunner().invoke(cli, ["reading-list", "--library", LIBRARY, "--corpus", corpus, "-n", "2",
                                      "--features", "tfidf", "--mail-to", "me@example.org"])
    assert result.exit_code == 0, result.output
    [envelope] = relay.messages
    assert email.message_from_bytes(envelope.content, policy=policy.default)["Subject"].startswith("Reading list")


def test_plain_smtp_never_leaves_the_loopback_interface():
    assert mail_settings(["me@x.org"], {"host": "127.0.0.2", "starttls": False}).starttls is False
    assert mail_settings(["me@x.org"], {"host": "::1", "starttls": False}).host == "::1"
    with pytest.raises(MailError, match="only over TLS"):
        mail_settings(["me@x.org"], {"host": "127.0.0.1.example.org", "starttls": False})
    with pytest.raises(MailError, match="a login is only sent over TLS"):  # not even to a local relay
        mail_settings(["me@x.org"], {"host": "127.0.0.1", "starttls": False, "user": "me", "password": "pw"})


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX file modes")
def test_a_config_others_can_write_is_refused_before_any_mail(corpus, relay, monkeypatch):  # noqa: F811
    for name in ("ZOTREC_SMTP_HOST", "ZOTREC_SMTP_PORT", "ZOTREC_SMTP_STARTTLS"):
        monkeypatch.delenv(name, raising=False)
    path = _config(f'[mail]\nhost = "127.0.0.1"\nport = {relay.port}\nstarttls = false\n', 0o666)
    line = _digest(corpus)
    assert f"{path}: others may write zotrec's config file; refusing to use it" in line, line
    assert relay.messages == []


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX file modes")
def test_a_world_readable_config_with_the_password_is_refused(corpus, monkeypatch):  # noqa: F811
    for name in ("ZOTREC_SMTP_HOST", "ZOTREC_SMTP_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    path = _config('[mail]\nhost = "smtp.example.org"\nuser = "me"\npassword = "s3cret-Pa55"\n', 0o644)
    line = _digest(corpus)
    assert f"{path}: holds the SMTP password but others can read it; refusing to use it" in line, line
    assert "s3cret" not in line
