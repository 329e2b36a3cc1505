"""Versions an older arena kept as files beside its SQLite store are
imported into the store once, under their own numbers, and play on from
the build cache without building again."""

from __future__ import annotations

import json
from pathlib import Path

from arena.hosting.legacy import import_legacy
from arena.hosting.versions import BuildStatus
from tests.hosting.conftest import versions_at

BOT = b"print('hello')\n"


def _legacy(root: Path, number: int, status: str, matches: list[str]) -> Path:
    """A version folder as the file layout wrote it."""
    folder = root / "oldbot" / f"v{number}"
    (folder / "upload").mkdir(parents=True)
    (folder / "upload" / "upload.py").write_bytes(BOT)
    (folder / "app").mkdir()
    (folder / "app" / "bot.py").write_bytes(BOT)
    (folder / "build.log").write_text(f"$ build of v{number}\n")
    (folder / "stderr").mkdir()
    for match in matches:
        (folder / "stderr" / f"{match}.log").write_text(f"said in {match}\n")
    (folder / "version.json").write_text(json.dumps({
        "bot": "oldbot", "version": number, "lang": "python", "status": status,
        "created_at": 1000.0 + number, "filename": "bot.py", "files": ["bot.py"],
        "built_at": 1001.0 + number, "build_seconds": 0.5, "reason": None,
        "run": ["python3", "-u", "bot.py"], "matches": matches, "game": "muushig",
        "validation": {"passed": True, "match_id": None}}))
    return folder


def test_an_older_arenas_version_files_are_imported_once(tmp_path: Path) -> None:
    versions = versions_at(tmp_path)
    _legacy(versions.root, 2, "ready", ["m-1", "m-2"])
    _legacy(versions.root, 3, "failed", [])
    assert import_legacy(versions) == [("oldbot", 2), ("oldbot", 3)]
    active = versions.active("oldbot")
    assert active is not None and active.version == 2 and active.matches == ["m-1", "m-2"]
    assert active.validated
    assert versions.get("oldbot", 3).status is BuildStatus.FAILED
    assert versions.build_log("oldbot", 2) == "$ build of v2\n"
    assert versions.stderr("oldbot", 2, "m-2") == b"said in m-2\n"
    assert versions.upload(active) == BOT
    assert versions.is_built_here(active)  # plays without building again
    assert (versions.local_dir(active) / "app" / "bot.py").read_bytes() == BOT
    assert import_legacy(versions) == []  # once
    # The next upload takes the number after the imported ones.
    assert versions.new_version("oldbot", "bot.py", "python", BOT).version == 4
