"""SSH key pairs for the fabric check: the formats sshd and ssh read, a new pair every time."""

from __future__ import annotations

import base64
import struct

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from components import sshkeys


def test_the_private_key_is_openssh_and_matches_the_public_key() -> None:
    pair = sshkeys.generate(comment="fabric-check-h100")
    private = serialization.load_ssh_private_key(pair.private_openssh.encode(), password=None)
    public = serialization.load_ssh_public_key(pair.public_openssh.encode())
    assert isinstance(private, Ed25519PrivateKey) and isinstance(public, Ed25519PublicKey)
    assert private.public_key().public_bytes_raw() == public.public_bytes_raw()
    assert pair.private_openssh.startswith("-----BEGIN OPENSSH PRIVATE KEY-----\n")


def test_the_public_key_is_one_authorized_keys_line_with_its_comment() -> None:
    line = sshkeys.generate(comment="fabric-check-h100").public_openssh
    assert line.endswith("\n") and line.count("\n") == 1
    kind, blob, comment = line.split()
    assert (kind, comment) == ("ssh-ed25519", "fabric-check-h100")
    (length,) = struct.unpack(">I", base64.b64decode(blob)[:4])
    assert base64.b64decode(blob)[4 : 4 + length] == b"ssh-ed25519"


def test_each_pair_is_new() -> None:
    assert sshkeys.generate().private_openssh != sshkeys.generate().private_openssh
    assert len(sshkeys.generate().public_openssh.split()) == 2, "no comment, no trailing field"
