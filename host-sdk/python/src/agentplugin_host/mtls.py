"""AutoMTLS: the one-time certificates go-plugin hosts and plugins exchange
at launch so that every byte between them is mutually authenticated TLS.

The host makes a self-signed certificate, hands its PEM to the plugin in
PLUGIN_CLIENT_CERT and keeps the key; the plugin answers with its own
certificate (base64 DER, unpadded) in the handshake line. Each side then
trusts exactly the other's certificate, for the plugin's server and for
the host callback served through the broker alike. Like go-plugin's, the
certificate is a CA certificate for the name "localhost" valid for both
client and server authentication.
"""

from __future__ import annotations

import base64
import datetime
import ssl
from dataclasses import dataclass

from .errors import HandshakeError, PluginError

#: The name both certificates are issued for and the host verifies.
TLS_SERVER_NAME = "localhost"


@dataclass(frozen=True)
class KeyPair:
    """A PEM certificate and its PEM private key."""

    cert_pem: bytes
    key_pem: bytes


def generate_cert() -> KeyPair:
    """A fresh self-signed P-256 certificate for one plugin launch."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise PluginError(
            "AutoMTLS needs the Python package 'cryptography' (Debian: apt install python3-cryptography; "
            "elsewhere: pip install cryptography), or launch plugins with Transport.SOCKET_DIR"
        ) from e
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, TLS_SERVER_NAME),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "agentplugin host"),
    ])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(TLS_SERVER_NAME)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_encipherment=True, key_agreement=True, key_cert_sign=True,
                content_commitment=False, data_encipherment=False, crl_sign=False,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    return KeyPair(
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )


def server_cert_pem(field: str) -> bytes:
    """The plugin's certificate as PEM, from the handshake line's field
    (base64 standard alphabet without padding, DER inside)."""
    try:
        der = base64.b64decode(field + "=" * (-len(field) % 4), validate=True)
    except (ValueError, TypeError) as e:
        raise HandshakeError(f"the plugin's certificate in the handshake line is not base64: {e}") from e
    return ssl.DER_cert_to_PEM_cert(der).encode()
