"""A host name that does not resolve fails at once, in one line: no retries, no backoff waits."""

import socket

import pytest


def _no_dns(*args, **kwargs):
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def test_a_host_that_does_not_resolve_is_not_retried(monkeypatch):
    from recommender.corpus.http import FetchError, FetchSettings, FetchStats, Http

    monkeypatch.setattr(socket, "getaddrinfo", _no_dns)  # no network: every name fails to resolve
    waits: list[float] = []
    stats = FetchStats()
    with Http(FetchSettings(sleep=waits.append), stats) as http, pytest.raises(FetchError) as raised:
        http.get_json("https://api2.openreview.net.invalid/notes")
    message = str(raised.value)
    assert waits == [] and stats.requests == 1 and stats.retries == 0
    assert "does not resolve" in message and "api2.openreview.net.invalid" in message
    assert "\n" not in message


def test_a_refused_connection_is_still_retried(monkeypatch):
    """Only the DNS failure is final: a refused connection may be a server restarting."""
    from recommender.corpus.http import FetchError, FetchSettings, FetchStats, Http

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now: connections are refused
    waits: list[float] = []
    stats = FetchStats()
    with Http(FetchSettings(retries=2, sleep=waits.append), stats) as http, pytest.raises(FetchError):
        http.get_json(f"http://127.0.0.1:{port}/notes")
    assert stats.requests == 3 and len(waits) == 2


def test_unresolved_host_walks_the_causes():
    from recommender.retry import unresolved_host

    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except OSError as inner:
            raise ConnectionError("wrapped") from inner
    except ConnectionError as outer:
        assert unresolved_host(outer)
    assert not unresolved_host(ConnectionRefusedError(111, "refused"))
