"""Bot and admin tokens: generated once, stored only as a hash."""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_BYTES = 24


def new_token() -> str:
    """A fresh URL-safe token; shown to its owner once, never stored."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    """The stored form of a token (hex SHA-256).

    Tokens are long random strings, not passwords, so a fast hash is enough:
    there is nothing to brute-force.
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_matches(token: str, token_hash: str) -> bool:
    return hmac.compare_digest(hash_token(token), token_hash)
