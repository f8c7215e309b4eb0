"""The go-plugin handshake: what the host puts in the plugin's environment
and the one line the plugin answers with on stdout.

The line is ``CORE|APP|NETWORK|ADDRESS|PROTOCOL|CERT``: go-plugin's core
protocol (1), the negotiated application protocol (our PROTOCOL_MAJOR),
where the plugin's gRPC server listens (``unix`` and a socket path; ``tcp``
on Windows), ``grpc``, and with AutoMTLS the plugin's certificate. A
seventh field appears only when the host asked for broker multiplexing,
which this host never does.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from .errors import HandshakeError
from .mtls import server_cert_pem
from .version import CORE_PROTOCOL_VERSION, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, PROTOCOL_MAJOR

#: go-plugin's variable naming the directory a plugin creates its Unix
#: sockets in (go-plugin's EnvUnixSocketDir).
ENV_UNIX_SOCKET_DIR = "PLUGIN_UNIX_SOCKET_DIR"
#: The host's certificate for AutoMTLS.
ENV_CLIENT_CERT = "PLUGIN_CLIENT_CERT"


class Transport(enum.Enum):
    """How the host and the plugin protect their connections.

    AUTO_MTLS (the default, as the Go host SDK): one-time certificates,
    mutual TLS on every connection; the plugin's sockets are in the
    temporary directory.

    SOCKET_DIR: no TLS; every socket of both sides lives in a directory the
    host creates with mode 0700 (PLUGIN_UNIX_SOCKET_DIR), so only the
    host's own user can connect. Cheaper per call. Neither mode protects
    against processes of the host's own user, who can read the plugin's
    environment and memory anyway.
    """

    AUTO_MTLS = "auto-mtls"
    SOCKET_DIR = "socket-dir"


def handshake_env(transport: Transport, socket_dir: str, client_cert_pem: Optional[bytes]) -> dict[str, str]:
    """The variables go-plugin's Serve reads, for a launch with transport."""
    env = {
        MAGIC_COOKIE_KEY: MAGIC_COOKIE_VALUE,
        "PLUGIN_MIN_PORT": "0",
        "PLUGIN_MAX_PORT": "0",
        "PLUGIN_PROTOCOL_VERSIONS": str(PROTOCOL_MAJOR),
    }
    if transport is Transport.SOCKET_DIR:
        env[ENV_UNIX_SOCKET_DIR] = socket_dir
    elif client_cert_pem is not None:
        env[ENV_CLIENT_CERT] = client_cert_pem.decode()
    return env


@dataclass(frozen=True)
class HandshakeLine:
    """The plugin's answer, parsed."""

    app_version: int
    network: str
    address: str
    protocol: str
    server_cert_pem: Optional[bytes]

    @property
    def target(self) -> str:
        """The gRPC target to dial."""
        if self.network == "unix":
            return "unix:" + self.address
        return self.address


def parse_handshake_line(line: str, path: str) -> HandshakeLine:
    """Parse and check the handshake line of the plugin at path."""
    parts = line.strip().split("|")
    if len(parts) < 5:
        raise HandshakeError(
            f"{path} answered {line.strip()[:200]!r} instead of a go-plugin handshake line "
            f"(is it an agentplugin plugin built for protocol major {PROTOCOL_MAJOR}?)"
        )
    try:
        core, app = int(parts[0]), int(parts[1])
    except ValueError:
        raise HandshakeError(f"{path}: the handshake line {line.strip()[:200]!r} has no protocol versions") from None
    if core != CORE_PROTOCOL_VERSION:
        raise HandshakeError(f"{path} speaks go-plugin core protocol {core}, this host {CORE_PROTOCOL_VERSION}")
    if app != PROTOCOL_MAJOR:
        raise HandshakeError(f"{path} speaks protocol major {app}, the host {PROTOCOL_MAJOR}")
    network, address, protocol = parts[2], parts[3], parts[4]
    if network not in ("unix", "tcp"):
        raise HandshakeError(f"{path} listens on an unknown network {network!r}")
    if protocol != "grpc":
        raise HandshakeError(f"{path} serves protocol {protocol!r}; this host speaks only grpc")
    cert = None
    if len(parts) >= 6 and len(parts[5]) > 50:
        cert = server_cert_pem(parts[5])
    return HandshakeLine(app_version=app, network=network, address=address, protocol=protocol, server_cert_pem=cert)
