"""SSH key pairs in OpenSSH format, made in the program (for the fabric check's pods to trust each other)."""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


@dataclass(frozen=True, slots=True)
class KeyPair:
    """An Ed25519 key pair: the private key as `ssh-keygen` writes it, the public key as authorized_keys takes it."""

    private_openssh: str
    public_openssh: str


def generate(comment: str = "") -> KeyPair:
    """A new Ed25519 key pair, unencrypted (it lives in a Kubernetes Secret, which is its protection)."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    return KeyPair(private, f"{public} {comment}".rstrip() + "\n")
