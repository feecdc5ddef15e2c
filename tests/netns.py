"""A second "host" on this machine: a Linux network namespace joined to this one by a veth pair.

Inside the namespace there is only its own loopback and the pair's far end: the first host's
servers (which listen on 127.0.0.1 here) are reachable only through relays that listen on this
side's address of the pair, the way another machine would reach them over the network. Where the
machine does not allow namespaces (no CAP_NET_ADMIN, no `ip`), ``network_namespace`` yields None.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from tests.relay import TcpRelay


@dataclass(frozen=True)
class Namespace:
    name: str
    host_ip: str  # this side of the pair: where the relays listen
    inner_ip: str  # the namespace's side

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the namespace (``ip netns exec`` execs it: the pid is the command's)."""
        return ["ip", "netns", "exec", self.name, *argv]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@contextmanager
def network_namespace(tag: str) -> Iterator[Namespace | None]:
    """A namespace with a veth pair to this one (a /30 of 10.250.0.0/16 picked from the pid), or None."""
    octet = os.getpid() % 250 + 1
    name, outer, inner = f"engram-{tag}-{os.getpid()}", f"eh{os.getpid() % 100000}a", f"eh{os.getpid() % 100000}b"
    namespace = Namespace(name, f"10.250.{octet}.1", f"10.250.{octet}.2")
    try:
        _set_up(namespace, outer, inner)
    except (OSError, subprocess.CalledProcessError):
        _tear_down(namespace, outer)
        yield None  # not allowed here (an unprivileged container, no veth): the caller goes on without
        return
    try:
        yield namespace
    finally:
        _tear_down(namespace, outer)


def _set_up(namespace: Namespace, outer: str, inner: str) -> None:
    if shutil.which("ip") is None:
        raise OSError("no ip command")
    name = namespace.name
    _ip("netns", "add", name)
    _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
    _ip("link", "set", inner, "netns", name)
    _ip("addr", "add", f"{namespace.host_ip}/30", "dev", outer)
    _ip("link", "set", outer, "up")
    _ip("netns", "exec", name, "ip", "addr", "add", f"{namespace.inner_ip}/30", "dev", inner)
    _ip("netns", "exec", name, "ip", "link", "set", inner, "up")
    _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")


def _tear_down(namespace: Namespace, outer: str) -> None:
    if shutil.which("ip") is None:
        return
    subprocess.run(["ip", "link", "del", outer], capture_output=True)
    subprocess.run(["ip", "netns", "del", namespace.name], capture_output=True)


@contextmanager
def relays(listen_ip: str, ports: list[int]) -> Iterator[None]:
    with ExitStack() as stack:
        for port in ports:
            stack.callback(TcpRelay(port, listen_ip, port).close)
        yield
