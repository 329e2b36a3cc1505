"""Where the server keeps its deal keys while they are secret.

A tournament's key is drawn once, when the tournament is created, and must
survive a crash (a resumed tournament deals the remaining slots from the same
key, or the published commitment would no longer hold) and be the same on
every node dealing it. Where it is kept depends on the store:

* a SQLite file: on the server's disk, next to the database, in a file only
  its owner may read (``deal-keys/<tournament>.key``), never in the database
  the web serves from (a copy of the ``.db`` file gives no key away);
* a database server (PostgreSQL), which several nodes share: in its
  ``deal_keys`` table (:mod:`arena.storage.key_table`), which only the
  arena's own role may read;
* an in-memory store: in this process's memory, gone with it.

Whichever the place, the first key kept for a tournament is the key:
keeping another one for it returns the first (two nodes creating the same
tournament at once converge on one key). Ladder matches each draw their own
key; they are appended to ``deal-keys/ladder.jsonl`` (one line per match)
once the match is over.

"Revealed" is a rule about who may read the key, not a place: the key is
printed by ``arena tournament`` and used by ``arena verify`` only once the
tournament is finished (or the ladder match over).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from arena.storage.base import StorageError
from arena.storage.private import private_dir
from protocol.deals import DealKeyError, key_commitment, new_deal_key, parse_deal_key

KEYS_DIR = "deal-keys"
LADDER_TABLE = "ladder"  # the table name ladder matches' decks are derived under
LADDER_FILE = "ladder.jsonl"


# A ladder match's key in the deal_keys table sits under this prefix and its
# match id (tournament ids are names, which never contain a colon).
LADDER_SCOPE = "match:"


class KeyringError(StorageError):
    """A stored key is missing or does not match its commitment."""


def store_directory(store: Any) -> Path | None:
    """The folder of a file-backed store (None for an in-memory one, or a
    database server's)."""
    path = getattr(store, "path", None)
    if not path or store_in_memory(store):
        return None
    return Path(path).resolve().parent


def store_in_memory(store: Any) -> bool:
    """An SQLite store in this process's memory: gone when the process is."""
    path = str(getattr(store, "path", None) or "")
    return path == ":memory:" or path.startswith("file::memory:")


def keeps_keys_in_table(store: Any) -> bool:
    """A store shared by nodes over a database server keeps its keys in it."""
    return bool(getattr(store, "url", None)) and hasattr(store, "keep_deal_key")


class DealKeyring:
    """Deal keys by scope (a tournament id): on disk beside a SQLite file,
    in the ``deal_keys`` table of a database server (``table``: the store),
    or, with neither, in memory for this process only."""

    def __init__(self, directory: Path | None, *, table: Any = None) -> None:
        self.directory = directory / KEYS_DIR if directory is not None else None
        self.table = table
        self._memory: dict[str, bytes] = {}

    @property
    def where(self) -> str:
        if self.directory is not None:
            return f" in {self.directory}"
        if self.table is not None:
            return " in the database's deal_keys table"
        return " in this process's memory"

    @classmethod
    def for_store(cls, store: Any) -> "DealKeyring":
        keyring = getattr(store, "_deal_keyring", None)
        if keyring is None:
            keyring = (cls(None, table=store) if keeps_keys_in_table(store)
                       else cls(store_directory(store)))
            try:
                store._deal_keyring = keyring  # one per store, so memory keys survive a resume
            except AttributeError:
                pass
        return keyring

    def _file(self, scope: str) -> Path:
        assert self.directory is not None
        return self.directory / f"{scope}.key"

    def load(self, scope: str) -> bytes | None:
        if self.table is not None:
            text = self.table.kept_deal_key(scope)
            if text is None:
                return None
            try:
                return parse_deal_key(text)
            except DealKeyError as exc:
                raise KeyringError(f"the deal key kept for {scope!r}: {exc}") from None
        if self.directory is None:
            return self._memory.get(scope)
        try:
            text = self._file(scope).read_text()
        except FileNotFoundError:
            return None
        try:
            return parse_deal_key(text)
        except DealKeyError as exc:
            raise KeyringError(f"{self._file(scope)}: {exc}") from None

    def create(self, scope: str, key: bytes | None = None) -> bytes:
        """Keep a key for ``scope`` (drawn unless given, for a replay) and
        return the key kept: if one was kept already (another node, an
        earlier run) that one, never overwritten. A given key that differs
        from the kept one is refused."""
        wanted = key
        key = key if key is not None else new_deal_key()
        if self.table is not None:
            kept = parse_deal_key(self.table.keep_deal_key(scope, key.hex(),
                                                           key_commitment(key)))
        elif self.directory is None:
            kept = self._memory.setdefault(scope, key)
        else:
            kept = self._create_file(scope, key)
        if wanted is not None and kept != wanted:
            raise KeyringError(f"another deal key is kept for {scope!r}{self.where}")
        return kept

    def _create_file(self, scope: str, key: bytes) -> bytes:
        assert self.directory is not None
        private_dir(self.directory)
        path = self._file(scope)
        try:
            # O_EXCL: never overwrite the key of a tournament that was started.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            kept = self.load(scope)
            if kept is None:  # pragma: no cover - removed between the two calls
                raise KeyringError(f"{path} vanished while it was being kept") from None
            return kept
        with os.fdopen(fd, "w") as f:
            f.write(key.hex() + "\n")
            f.flush()
            os.fsync(f.fileno())
        return key

    def load_checked(self, scope: str, commitment: str) -> bytes:
        key = self.load(scope)
        if key is None:
            raise KeyringError(f"no deal key kept for {scope!r}{self.where}")
        if key_commitment(key) != commitment:
            raise KeyringError(f"the kept deal key of {scope!r} does not match the "
                               "commitment published at the start")
        return key

    # -- ladder matches ---------------------------------------------------------
    def record_ladder_key(self, match_id: str, key: bytes) -> None:
        """Called once the match is over: its key may be read from then on."""
        line = json.dumps({"match": match_id, "key": key.hex()}) + "\n"
        if self.table is not None:  # every node of the database finds it, and a restart
            self.table.keep_deal_key(f"{LADDER_SCOPE}{match_id}", key.hex(),
                                     key_commitment(key))
            return
        if self.directory is None:
            self._memory[f"{LADDER_SCOPE}{match_id}"] = key
            return
        private_dir(self.directory)
        fd = os.open(self.directory / LADDER_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a") as f:
            f.write(line)

    def ladder_entries(self) -> list[tuple[str, bytes]]:
        """(match id, key) of every ladder key kept here (for ``arena db copy``)."""
        if self.table is not None:
            return [(scope.removeprefix(LADDER_SCOPE), key)
                    for scope in self.table.kept_deal_key_ids()
                    if scope.startswith(LADDER_SCOPE)
                    and (key := self.load(scope)) is not None]
        if self.directory is None:
            return [(scope.removeprefix(LADDER_SCOPE), key)
                    for scope, key in self._memory.items() if scope.startswith(LADDER_SCOPE)]
        try:
            lines = (self.directory / LADDER_FILE).read_text().splitlines()
        except FileNotFoundError:
            return []
        found = []
        for line in lines:
            try:
                entry = json.loads(line)
                found.append((str(entry["match"]), parse_deal_key(entry["key"])))
            except (ValueError, KeyError, TypeError, DealKeyError):
                continue  # a torn last line after a crash
        return found

    def ladder_key(self, match_id: str) -> bytes | None:
        if self.table is not None:
            return self.load(f"{LADDER_SCOPE}{match_id}")
        if self.directory is None:
            return self._memory.get(f"{LADDER_SCOPE}{match_id}")
        try:
            lines = (self.directory / LADDER_FILE).read_text().splitlines()
        except FileNotFoundError:
            return None
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a torn last line after a crash
            if entry.get("match") == match_id:
                return parse_deal_key(entry["key"])
        return None
