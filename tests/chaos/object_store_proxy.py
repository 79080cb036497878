"""A fault-injecting proxy in front of an S3-compatible server, for the faults real object stores produce.

It listens on the loopback address and forwards each HTTP request to the server, one request per
connection (it asks both sides for ``Connection: close``), unless the fault in force picks the request:

- ``slowdown``: answers ``503 SlowDown`` with S3's error body, as a throttling store does;
- ``reset``: forwards the request and half of its body (an upload), or the response and half of its
  body (a download), then resets both connections (TCP RST), as a dropped connection does mid-transfer;
- ``stall``: takes the request and answers nothing for ``seconds``, as a store that hangs does, then
  closes;
- ``slow``: forwards the request after ``seconds``, as a slow store does.

A fault picks the requests whose method is one of ``methods`` and whose path matches ``path``, every
``every``-th of those, at most ``budget`` of them (None: without end). Only loopback addresses are
used, and every wait is bounded.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

_HEAD_LIMIT = 64 * 1024
_CHUNK = 64 * 1024


@dataclass
class Fault:
    kind: str  # slowdown | reset | stall | slow
    methods: frozenset[str] = frozenset({"GET", "PUT", "POST", "HEAD", "DELETE"})
    path: str = r""
    every: int = 1
    budget: int | None = None
    seconds: float = 0.0
    _seen: int = field(default=0, repr=False)
    _used: int = field(default=0, repr=False)

    def picks(self, method: str, target: str) -> bool:
        if method not in self.methods or not re.search(self.path, target):
            return False
        self._seen += 1
        if self._seen % self.every or (self.budget is not None and self._used >= self.budget):
            return False
        self._used += 1
        return True


class FaultyObjectStore:
    """The proxy: ``endpoint`` is its address; ``fault`` (None: none) is read for each request."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.fault: Fault | None = None
        self.injected: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.5)
        self._running = True
        self._thread = threading.Thread(target=self._serve, name="faulty-object-store", daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        host, port = self._listener.getsockname()[:2]
        return f"http://{host}:{port}"

    def set(self, fault: Fault | None) -> None:
        with self._lock:
            self.fault = fault

    def close(self) -> None:
        self._running = False
        self._thread.join(5)
        self._listener.close()

    def _serve(self) -> None:
        while self._running:
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _pick(self, method: str, target: str) -> str | None:
        with self._lock:
            self.requests[method] += 1
            fault = self.fault
            if fault is None or not fault.picks(method, target):
                return None
            self.injected[fault.kind] += 1
            return fault.kind

    def _handle(self, client: socket.socket) -> None:
        client.settimeout(120)
        upstream: socket.socket | None = None
        try:
            head, rest = _read_head(client)
            if head is None:
                return
            lines = head.split(b"\r\n")
            method, target = lines[0].decode("latin-1").split(" ")[:2]
            headers = {k.strip().lower(): v.strip() for k, _, v in
                       (line.decode("latin-1").partition(":") for line in lines[1:] if line)}
            kind = self._pick(method, target)
            length = int(headers.get("content-length", "0") or 0)
            if kind == "slowdown":
                if "100-continue" not in headers.get("expect", "").lower():
                    _drain(client, rest, length)
                _answer_slowdown(client, target)
                return
            if kind == "stall":
                time.sleep(self.fault.seconds if self.fault else 0)
                return
            if kind == "slow":
                time.sleep(self.fault.seconds if self.fault else 0)
            upstream = socket.create_connection(self.upstream, timeout=120)
            kept = [line for line in lines[1:] if line and not line.lower().startswith(b"connection:")]
            upstream.sendall(b"\r\n".join([lines[0], *kept, b"Connection: close", b"", b""]))
            if kind == "reset" and length > 0:
                # The server's answers reach the client (its 100 Continue, before which a client sends no body).
                threading.Thread(target=_pump, args=(upstream, client, b""), daemon=True).start()
                _relay_body(client, upstream, rest, length // 2)
                _reset(client)
                upstream.shutdown(socket.SHUT_RDWR)
                return
            if kind == "reset":
                # A download: no thread may block on the client's socket, or closing it sends no RST.
                upstream.sendall(rest)
                _respond(upstream, client, cut_at_half=True)
                return
            threading.Thread(target=_pump, args=(client, upstream, rest), daemon=True).start()
            _respond(upstream, client, cut_at_half=False)
        except OSError:
            pass
        finally:
            for s in (client, upstream):
                if s is not None:
                    try:
                        s.close()
                    except OSError:
                        pass


def _read_head(sock: socket.socket) -> tuple[bytes | None, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(_CHUNK)
        if not chunk or len(data) > _HEAD_LIMIT:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _drain(sock: socket.socket, rest: bytes, length: int) -> None:
    left = length - len(rest)
    while left > 0:
        chunk = sock.recv(min(_CHUNK, left))
        if not chunk:
            return
        left -= len(chunk)


def _answer_slowdown(sock: socket.socket, target: str) -> None:
    body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
            f"<Message>Please reduce your request rate.</Message><Resource>{target}</Resource>"
            "<RequestId>faulty-proxy</RequestId></Error>").encode()
    sock.sendall(b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\n"
                 + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)


def _relay_body(client: socket.socket, upstream: socket.socket, rest: bytes, limit: int) -> None:
    """Forwards up to `limit` bytes of the request's body (a client waiting for 100-continue sends none)."""
    sent = 0
    if rest:
        upstream.sendall(rest[:limit])
        sent = min(len(rest), limit)
    client.settimeout(2)
    try:
        while sent < limit:
            chunk = client.recv(min(_CHUNK, limit - sent))
            if not chunk:
                return
            upstream.sendall(chunk)
            sent += len(chunk)
    except TimeoutError:
        return


def _pump(source: socket.socket, target: socket.socket, first: bytes) -> None:
    try:
        if first:
            target.sendall(first)
        while chunk := source.recv(_CHUNK):
            target.sendall(chunk)
    except OSError:
        pass


def _respond(upstream: socket.socket, client: socket.socket, cut_at_half: bool) -> None:
    """Forwards the response; with `cut_at_half`, only its head and half its body, then resets the client."""
    if not cut_at_half:
        _pump(upstream, client, b"")
        return
    head, body = _read_head(upstream)
    if head is None:
        return
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")[1:]
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = upstream.recv(_CHUNK)
        if not chunk:
            break
        body += chunk
    client.sendall(head + b"\r\n\r\n" + body[: length // 2])
    _reset(client)


def _reset(sock: socket.socket) -> None:
    """Closes with a TCP RST, as a dropped connection ends."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()
    except OSError:
        pass
