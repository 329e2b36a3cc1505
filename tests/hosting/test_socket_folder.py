"""The hosted bots' socket folder: the arena makes one per run in the
system's temporary directory (a Unix socket path must be short) and
removes it when it stops, whether it started fully or failed midway."""

from __future__ import annotations

from pathlib import Path

import pytest

import arena.hosting.service
from arena.app import Arena
from arena.hosting.versions import VersionStore
from arena.server.config import ServerConfig
from arena.storage.sqlite import SqliteStore
from arena.web.hosting_api import Hosting


def _arena(tmp_path: Path, store: SqliteStore) -> Arena:
    db = tmp_path / "arena.db"
    return Arena(ServerConfig(host="127.0.0.1", port=0, http_port=None, db=str(db),
                              house_wait_s=None), store,
                 hosting=Hosting(VersionStore(store, tmp_path / "hosted")), hosted=True)


async def test_a_stopped_arena_leaves_no_socket_folder(tmp_path: Path, temp: Path) -> None:
    store = SqliteStore(str(tmp_path / "arena.db"))
    arena = _arena(tmp_path, store)
    try:
        await arena.start()
        assert list(temp.glob("arena-bots-*"))  # made in the temporary directory
        await arena.stop()
    finally:
        store.close()
    assert list(temp.glob("arena-bots-*")) == []


async def test_an_arena_whose_hosting_fails_to_start_leaves_no_socket_folder(
        tmp_path: Path, temp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unreadable() -> None:
        raise PermissionError("/sys/fs/cgroup: permission denied")

    monkeypatch.setattr(arena.hosting.service, "remove_stale", unreadable)
    store = SqliteStore(str(tmp_path / "arena.db"))
    try:
        with pytest.raises(PermissionError):
            await _arena(tmp_path, store).start()
    finally:
        store.close()
    assert list(temp.glob("arena-bots-*")) == []
