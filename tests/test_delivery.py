"""Delivery: `reading-list --format atom` read back by a real feed parser (feedparser), and the e-mail digest
sent to a real SMTP server on 127.0.0.1 (aiosmtpd) over STARTTLS with a login (a test CA from trustme)."""

from __future__ import annotations

import email
import json
import socket
import ssl
from email import policy
from pathlib import Path

import pytest
from click.testing import CliRunner

from zotero_bridge.cli.main import cli

LIBRARY = str(Path(__file__).resolve().parents[1] / "examples" / "library.bib")
HOSTILE = 'Forecasting <script>alert(1)</script> & "time series" \x1b[31m'
USER, PASSWORD = "reader@example.org", "s3cret-Pa55"


@pytest.fixture
def corpus(tmp_path):
    rows = [{"id": f"arxiv:2501.{n:05d}", "title": title, "abstract": f"{title}: a study of method {n}.",
             "authors": ["Jane Doe"], "url": f"https://arxiv.org/abs/2501.{n:05d}",
             "updated": "2025-01-1{}T12:00:00+00:00".format(n % 10), "categories": ["cs.LG"]}
            for n, title in enumerate([HOSTILE, "Reward models from human preferences", "Normalizing flows",
                                       "Transformers for long-term forecasting", "Graph networks"], 1)]
    rows[4]["url"] = "javascript:alert(1)"
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def listing(corpus, *args):
    result = CliRunner().invoke(cli, ["reading-list", "--library", LIBRARY, "--corpus", corpus, "-n", "4",
                                      "--features", "tfidf", *args])
    assert result.exit_code == 0, result.output
    return result


def test_the_atom_feed_parses_with_stable_ids_and_escaped_text(corpus):
    import feedparser

    first = listing(corpus, "--format", "atom").stdout
    feed = feedparser.parse(first.encode("utf-8"))
    assert not feed.bozo, feed.get("bozo_exception")
    assert feed.version == "atom10" and len(feed.entries) == 4
    ranked = json.loads(listing(corpus, "--format", "json").stdout)
    assert [e.id for e in feed.entries] == [f"urn:zotrec:paper:{row['id']}" for row in ranked]
    from recommender.formats.output import safe_text

    assert [e.title for e in feed.entries] == [safe_text(row["title"]) for row in ranked]  # ESC → a space
    for entry in feed.entries:
        assert "Because you saved:" in entry.summary
        assert entry.link.startswith("https://arxiv.org/abs/")
    hostile = next(e for e in feed.entries if "Forecasting" in e.title and "script" in e.title)
    assert "\x1b" not in first and "<script>" not in hostile.content[0].value  # escaped inside the HTML
    again = feedparser.parse(listing(corpus, "--format", "atom").stdout.encode())
    assert [e.id for e in again.entries] == [e.id for e in feed.entries] and again.feed.id == feed.feed.id


@pytest.fixture
def smtp(tmp_path, monkeypatch):
    """aiosmtpd on 127.0.0.1 that demands STARTTLS before a login, and keeps what it receives."""
    import trustme
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    class Inbox:
        messages: list = []

        async def handle_DATA(self, server, session, envelope):
            self.messages.append(envelope)
            return "250 Message accepted"

    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (
            USER.encode(), PASSWORD.encode())
        return AuthResult(success=ok, handled=False)  # handled=False: aiosmtpd answers 535 itself

    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    cafile = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(cafile))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    inbox.messages = []
    controller = Controller(inbox, hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True,
                            authenticator=authenticate, auth_require_tls=True)
    controller.start()
    for name, value in {"ZOTREC_SMTP_HOST": "127.0.0.1", "ZOTREC_SMTP_PORT": str(port), "ZOTREC_SMTP_USER": USER,
                        "ZOTREC_SMTP_PASSWORD": PASSWORD, "ZOTREC_SMTP_CAFILE": str(cafile),
                        "ZOTREC_MAIL_FROM": "zotrec@example.org"}.items():
        monkeypatch.setenv(name, value)
    yield inbox
    controller.stop()


def test_the_digest_arrives_with_every_pick_and_reason(corpus, smtp):
    result = listing(corpus, "--format", "json", "--mail-to", "me@example.org")
    picks = json.loads(result.stdout)
    assert "Sent 4 papers to me@example.org by 127.0.0.1" in result.output and PASSWORD not in result.output
    [envelope] = smtp.messages
    assert envelope.rcpt_tos == ["me@example.org"]
    message = email.message_from_bytes(envelope.content, policy=policy.default)
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    for pick in picks:
        reason = "Because you saved: " + "; ".join(f"{r['title']} ({r['similarity']:.2f})" for r in pick["reasons"])
        assert reason in text
        assert pick["title"].split(" <")[0] in text and pick["title"].split(" <")[0] in html
        if pick["url"].startswith("https://"):
            assert pick["url"] in text and pick["url"] in html
    assert "<script>" not in html and "&lt;script&gt;" in html and "\x1b" not in text
    assert "javascript:" not in html and "javascript:" not in text
    assert message["Subject"].startswith("Reading list · ")


def test_a_wrong_password_is_one_line_without_it(corpus, smtp, monkeypatch):
    monkeypatch.setenv("ZOTREC_SMTP_PASSWORD", "wrong-Pa55word")
    result = CliRunner().invoke(cli, ["reading-list", "--library", LIBRARY, "--corpus", corpus, "-n", "2",
                                      "--features", "tfidf", "--mail-to", "me@example.org"])
    assert result.exit_code == 1
    assert "refused the login of reader@example.org" in result.output
    assert "wrong-Pa55word" not in result.output and "Traceback" not in result.output
    assert smtp.messages == []


def test_a_login_never_goes_without_tls(monkeypatch):
    from zotero_bridge.deliver.mail import MailError, mail_settings

    monkeypatch.setenv("ZOTREC_SMTP_STARTTLS", "0")
    with pytest.raises(MailError, match="only sent over TLS"):
        mail_settings(["me@example.org"], {"host": "smtp.example.org", "user": "me"})
    with pytest.raises(MailError, match="only over TLS"):
        mail_settings(["me@example.org"], {"host": "smtp.example.org"})
    monkeypatch.delenv("ZOTREC_SMTP_STARTTLS")
    settings = mail_settings([], {"host": "smtp.example.org", "user": "me", "to": "a@x.org, b@x.org"})
    assert settings.to == ("a@x.org", "b@x.org") and settings.port == 587 and "password" not in repr(settings)


def test_a_line_break_in_an_address_is_one_line_not_a_header():
    from zotero_bridge.deliver.mail import MailError, MailSettings, build_message

    with pytest.raises(MailError, match="not an address"):
        build_message("s", "t", "<p>h</p>", MailSettings(host="h", sender="a@b.c\nBcc: x@y.z", to=("me@x.org",)))
