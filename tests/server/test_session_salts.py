"""Deal salts: 16 random bytes as 32 hex digits, never repeated, also
across a refill of the pool they are read from."""

import re

from arena.server.session_output import _SALT_POOL, _new_salt


def test_salts_are_32_hex_digits_and_fresh_across_refills():
    salts = [_new_salt() for _ in range(_SALT_POOL * 2 + 3)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", salt) for salt in salts)
    assert len(set(salts)) == len(salts)
