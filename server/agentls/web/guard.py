"""Which addresses web_fetch may connect to: public ones, and those of the hosts the user
allows (`webFetch.allowHosts`).

The guard is built into the connection itself (`GuardedBackend`, httpcore's network
backend): a name is resolved once, every address it resolves to is checked, and the socket
is opened to an address checked, never to the name again, so a DNS answer that changes
between the check and the connection (rebinding) changes nothing. TLS still names the host
(SNI, the certificate's check) and so does the Host header: httpcore takes them from the
URL, not from the address connected to. A redirect is a new connection, checked the same way.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

import httpcore2

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""IPv4 addresses carried in IPv6 by a NAT64 gateway: judged as the IPv4 address they hold."""


class Refused(Exception):
    """web_fetch may not connect there; the message says why, for the model and the user."""


def embedded_ipv4(address: Address) -> Address:
    """The IPv4 address an IPv6 one stands for (`::ffff:127.0.0.1`, 6to4, NAT64), else
    itself: each reaches the IPv4 host, so it is judged as that host."""
    if isinstance(address, ipaddress.IPv4Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def kind_refused(address: Address) -> str | None:
    """What kind of address `address` is when it is not a public one (None when it is):
    `a loopback address`, ..."""
    judged = embedded_ipv4(address)
    also = "" if judged == address else f" (standing for {judged})"
    if judged.is_loopback:
        return f"a loopback address{also}"
    if judged.is_link_local:  # 169.254.169.254, the cloud metadata service, is one
        return f"a link-local address{also}, where cloud metadata services answer"
    if judged.is_unspecified:
        return f"the unspecified address{also}"
    if judged.is_multicast:
        return f"a multicast address{also}"
    if judged.is_private or not judged.is_global:
        return f"a private or reserved address{also}"
    return None


def refusal(host: str, address: str, kind: str) -> str:
    """One plain sentence: what the host is, and the setting that would allow it."""
    what = f"{host} is {kind}" if address == host else f"{host} resolves to {address}, {kind}"
    return (
        f"{what}, and web_fetch reaches only public addresses unless the host is in the "
        "webFetch.allowHosts setting"
    )


def allowed_host(host: str, allow_hosts: Iterable[str]) -> bool:
    return host.lower().rstrip(".") in set(allow_hosts)


async def checked_addresses(host: str, port: int, allow_hosts: Iterable[str]) -> list[str]:
    """The addresses `host` resolves to, each checked; Refused when any is not public (a
    name with one private answer among public ones is refused: which answer a connection
    gets is not ours to choose), unless the user allows the host."""
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except socket.gaierror as error:
        raise Refused(f"{host} cannot be resolved ({error.strerror})") from None
    addresses: list[str] = []
    for _, _, _, _, sockaddr in found:
        text = str(sockaddr[0]).partition("%")[0]  # an IPv6 scope id is not the address
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise Refused(f"{host} resolves to no address")
    if allowed_host(host, allow_hosts):
        return addresses
    for text in addresses:
        kind = kind_refused(ipaddress.ip_address(text))
        if kind is not None:
            raise Refused(refusal(host, text, kind))
    return addresses


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to addresses `checked_addresses` let
    through. `inner` opens the socket (the default backend; a test's spy)."""

    def __init__(
        self, allow_hosts: Iterable[str], inner: httpcore2.AsyncNetworkBackend | None = None
    ) -> None:
        self.allow_hosts = tuple(allow_hosts)
        self.inner = inner or httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        addresses = await checked_addresses(host, port, self.allow_hosts)
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as error:
                failure = error  # the next address the name gave, as a browser would
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise Refused("web_fetch does not connect to local sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)
