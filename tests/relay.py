"""A TCP relay for tests: forwards connections to a server on 127.0.0.1, and can cut or hold them.

The browser suite puts one in front of the web server to break a stream mid-reply (``cut()``) and to
see what the page sent on re-attach (``heads_matching``); the scale-out test puts one on a network
namespace's link for each server, the way another machine would reach it over the network.
"""

from __future__ import annotations

import socket
import threading

_METHODS = (b"GET", b"POST", b"PATCH", b"DELETE", b"PUT")


class TcpRelay:
    """Listens on ``listen_ip:listen_port`` (0: any free port) and forwards to ``127.0.0.1:target_port``."""

    def __init__(self, target_port: int, listen_ip: str = "127.0.0.1", listen_port: int = 0) -> None:
        self.target_port = target_port
        self.listener = socket.create_server((listen_ip, listen_port))
        self.port = self.listener.getsockname()[1]
        self.request_heads: list[str] = []
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._flowing = threading.Event()  # cleared by hold(): bytes wait in the relay, as on a dead link
        self._flowing.set()
        threading.Thread(target=self._accept, name=f"relay-{self.port}", daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> int:
        """Close every connection open right now, as a broken network would; returns how many sockets."""
        with self._lock:
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            _close(sock)
        return len(sockets)

    def hold(self) -> None:
        """Stop forwarding, without closing anything: both ends wait (no error, no reset), as they would
        behind a network partition, until ``release()``."""
        self._flowing.clear()

    def release(self) -> None:
        """Forward again what was held, and whatever follows."""
        self._flowing.set()

    def close(self) -> None:
        self._closed.set()
        self._flowing.set()
        _close(self.listener)
        self.cut()

    def heads_matching(self, text: str) -> list[str]:
        """The HTTP request heads sent through the relay that contain ``text``."""
        with self._lock:
            return [head for head in self.request_heads if text in head]

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                _close(client)  # the server is down: the far side sees its connection refused, as it would
                continue
            with self._lock:
                self._open.update((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, from_client: bool) -> None:
        try:
            while data := source.recv(65536):
                if from_client and data[:8].split(b" ")[0] in _METHODS:
                    with self._lock:
                        self.request_heads.append(data.split(b"\r\n\r\n")[0].decode("latin-1"))
                self._flowing.wait()
                target.sendall(data)
        except OSError:
            pass
        finally:
            _close(source)
            _close(target)
            with self._lock:
                self._open.discard(source)
                self._open.discard(target)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass
