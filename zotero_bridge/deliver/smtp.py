"""An SMTP conversation bounded like an HTTP answer: a byte cap on everything the server says, and one deadline
for the whole conversation (connect, banner, STARTTLS, login, the message, QUIT).

smtplib reads a reply line by line without end (an endless multi-line reply took 15 GB in 90 s) and its timeout
is per socket call (a banner dripped a byte at a time, or a `220-` line every 20 s, never ends). Whatever answers
on the host and port does so before TLS, so these bounds hold from the first byte.
"""

from __future__ import annotations

import smtplib
import socket
import time

MAX_REPLY_BYTES = 64 << 10  # all the server's replies together: a whole real conversation is under 2 KiB
CONVERSATION_SECONDS = 60.0  # the whole exchange: a real one takes a second or two, the message included


class ReplyLimit(smtplib.SMTPException):
    """The server passed a bound (bytes or time); `what` says which, for the one-line error."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class _Replies:
    """The server's side, read from the socket itself so that both bounds hold inside a line too."""

    def __init__(self, client: _Bounded) -> None:
        self.client, self.buffer = client, b""

    def readline(self, limit: int = -1) -> bytes:
        client = self.client
        while b"\n" not in self.buffer and (limit < 0 or len(self.buffer) < limit):
            remaining = client.deadline - time.monotonic()
            if remaining <= 0:
                raise ReplyLimit(f"did not finish within {CONVERSATION_SECONDS:g} s")
            client.sock.settimeout(min(remaining, client.step_timeout))
            try:
                chunk = client.sock.recv(4096)
            except TimeoutError:
                if time.monotonic() >= client.deadline:
                    raise ReplyLimit(f"did not finish within {CONVERSATION_SECONDS:g} s") from None
                raise
            if not chunk:
                break
            client.received += len(chunk)
            if client.received > MAX_REPLY_BYTES:
                raise ReplyLimit(f"sent more than {MAX_REPLY_BYTES >> 10} KiB of replies")
            self.buffer += chunk
        end = self.buffer.find(b"\n") + 1 or len(self.buffer)
        if limit >= 0:
            end = min(end, limit)
        line, self.buffer = self.buffer[:end], self.buffer[end:]
        return line

    def close(self) -> None:
        self.buffer = b""


class _Bounded:
    """The bounds, mixed into smtplib's SMTP and SMTP_SSL: `getreply` reads through `_Replies`."""

    deadline: float
    received: int
    step_timeout: float

    def getreply(self):  # smtplib's own parsing, on bounded lines
        if self.file is None and self.sock is not None:  # a new socket: connected, or wrapped by STARTTLS
            self.file = _Replies(self)
        try:
            return super().getreply()
        except ReplyLimit:
            self.close()  # so that QUIT on leaving the `with` finds no connection, and says nothing more
            raise

    def _get_socket(self, host, port, timeout):
        remaining = self.deadline - time.monotonic()
        return super()._get_socket(host, port, max(0.1, min(timeout, remaining)))


class BoundedSMTP(_Bounded, smtplib.SMTP):
    def __init__(self, host: str, port: int, timeout: float, **options) -> None:
        self.deadline, self.received, self.step_timeout = time.monotonic() + CONVERSATION_SECONDS, 0, timeout
        super().__init__(host, port, timeout=timeout, **options)


class BoundedSMTPSSL(_Bounded, smtplib.SMTP_SSL):
    def __init__(self, host: str, port: int, timeout: float, **options) -> None:
        self.deadline, self.received, self.step_timeout = time.monotonic() + CONVERSATION_SECONDS, 0, timeout
        super().__init__(host, port, timeout=timeout, **options)


def connection_problem(error: OSError) -> str | None:
    """A host or port error in words (the caller names the settings), None for any other failure."""
    if isinstance(error, socket.gaierror):
        return f"no such host ({error.strerror or error})"
    if isinstance(error, ConnectionRefusedError):
        return "nothing answers on that port (connection refused)"
    if isinstance(error, (TimeoutError, socket.timeout)):
        return "no answer (timed out)"
    if isinstance(error, OSError) and error.errno in (101, 113):  # ENETUNREACH, EHOSTUNREACH
        return f"cannot be reached ({error.strerror})"
    return None
