"""One HTTP request with a deadline for the whole of it, as ``fcenv generate --timeout`` means.

A socket timeout (``urlopen(timeout=...)``) bounds each read, not the request: a server that
sends a byte every half second never trips it, and the run hangs. Here, once the connection
is made (connecting is one operation, bounded by the socket timeout), a timer shuts the socket
down when the deadline passes; whatever read is waiting then returns at once, and the request
fails with a ``TimeoutError`` that says so.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.request


class _Deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.passed = False
        self.timers: list[threading.Timer] = []

    def watch(self, sock: socket.socket) -> None:
        def expire() -> None:
            self.passed = True
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the read waiting on it
            except OSError:
                pass  # already closed

        timer = threading.Timer(max(0.0, self.end - time.monotonic()), expire)
        timer.daemon = True
        timer.start()
        self.timers.append(timer)

    def cancel(self) -> None:
        for timer in self.timers:
            timer.cancel()


def _handlers(deadline: _Deadline) -> list[urllib.request.BaseHandler]:
    class HTTPConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    class HTTPSConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    class HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(HTTPConnection, req)

    class HTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(HTTPSConnection, req, context=self._context)

    return [HTTPHandler(), HTTPSHandler()]


def read_reply(request: urllib.request.Request, timeout: float) -> bytes:
    """The body of the reply to ``request``, all of it within ``timeout`` seconds from now.
    Raises ``TimeoutError`` past the deadline, and what ``urlopen`` raises otherwise
    (``HTTPError`` for an error status, ``URLError`` / ``OSError`` for the connection,
    ``http.client.HTTPException`` for a reply cut short)."""
    deadline = _Deadline(timeout)
    opener = urllib.request.build_opener(*_handlers(deadline))
    try:
        with opener.open(request, timeout=timeout) as response:
            body = response.read()
    except (OSError, http.client.HTTPException):
        if deadline.passed:
            raise TimeoutError(f"no complete reply within {timeout:g} s (--timeout)") from None
        raise
    finally:
        deadline.cancel()
    if deadline.passed:  # the socket was shut down as the last bytes arrived
        raise TimeoutError(f"no complete reply within {timeout:g} s (--timeout)")
    return body
