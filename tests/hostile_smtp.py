"""A hostile SMTP server on 127.0.0.1: whatever answers on the mail host and port before TLS.

Each behaviour is what a real attack did against zotrec's digest (issue 42): an endless multi-line reply, a
`220-` continuation line now and then that never ends the banner, a banner dripped a byte at a time. Every
behaviour stops on its own after `give_up` seconds or `max_bytes`, so that a client without bounds fails the
test rather than hanging it. The greeting lines follow RFC 5321 §4.2 (`220-` continues, `220 ` ends).
"""

from __future__ import annotations

import socket
import threading
import time


class HostileSMTP:
    """`behaviour`: 'endless-reply' (a banner, then an EHLO answer of endless `250-` lines), 'slow-banner'
    (a `220-` line every `interval` s), 'drip' (a whole banner, one byte every `interval` s)."""

    def __init__(self, behaviour: str, *, interval: float = 0.2, give_up: float = 8.0,
                 max_bytes: int = 32 << 20) -> None:
        self.behaviour, self.interval, self.give_up, self.max_bytes = behaviour, interval, give_up, max_bytes
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.sent = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._stop = threading.Event()

    def __enter__(self) -> HostileSMTP:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.listener.close()
        self._thread.join(timeout=self.give_up + 2)

    def _serve(self) -> None:
        self.listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            with connection:
                try:
                    getattr(self, "_" + self.behaviour.replace("-", "_"))(connection, time.monotonic() + self.give_up)
                except OSError:  # the client hung up: what a bounded client does
                    pass

    def _send(self, connection: socket.socket, data: bytes) -> None:
        connection.sendall(data)
        self.sent += len(data)

    def _endless_reply(self, connection: socket.socket, until: float) -> None:
        self._send(connection, b"220 hostile.invalid ESMTP\r\n")
        connection.settimeout(self.give_up)
        connection.recv(1024)  # EHLO
        line = b"250-" + b"x" * 1000 + b"\r\n"
        while time.monotonic() < until and self.sent < self.max_bytes and not self._stop.is_set():
            self._send(connection, line * 64)

    def _slow_banner(self, connection: socket.socket, until: float) -> None:
        while time.monotonic() < until and not self._stop.is_set():
            self._send(connection, b"220-still greeting you\r\n")
            time.sleep(self.interval)

    def _drip(self, connection: socket.socket, until: float) -> None:
        banner = b"220 hostile.invalid ESMTP " + b"." * 200 + b"\r\n"
        for byte in banner:
            if time.monotonic() > until or self._stop.is_set():
                return
            self._send(connection, bytes([byte]))
            time.sleep(self.interval)
