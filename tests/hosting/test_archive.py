"""An upload is unpacked only if every member stays inside the archive root."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from arena.hosting.archive import ArchiveLimits, unpack_submission
from arena.hosting.errors import ArchiveError


def make_zip(members: dict[str, bytes], *, symlink: tuple[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        if symlink is not None:
            info = zipfile.ZipInfo(symlink[0])
            info.external_attr = (0o120777 << 16)
            archive.writestr(info, symlink[1])
    return buffer.getvalue()


def make_tar(members: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_single_source_file_keeps_its_name(tmp_path: Path) -> None:
    assert unpack_submission(b"print(1)\n", "mybot.py", tmp_path / "app") == ["mybot.py"]


def test_a_zip_is_unpacked_and_a_single_top_directory_is_flattened(tmp_path: Path) -> None:
    data = make_zip({"bot/main.py": b"x", "bot/lib/util.py": b"y"})
    assert unpack_submission(data, "bot.zip", tmp_path / "app") == ["lib/util.py", "main.py"]


def test_a_tar_gz_is_unpacked(tmp_path: Path) -> None:
    data = make_tar([("main.c", b"int main(){}"), ("strategy.h", b"")])
    assert unpack_submission(data, "bot.tar.gz", tmp_path / "app") == ["main.c", "strategy.h"]


@pytest.mark.parametrize("name", ["../evil.py", "bot/../../evil.py", "/etc/evil", "C:/evil",
                                  "bot\\..\\evil"])
def test_paths_outside_the_root_are_refused_in_zips(tmp_path: Path, name: str) -> None:
    with pytest.raises(ArchiveError):
        unpack_submission(make_zip({name: b"x"}), "bot.zip", tmp_path / "app")
    assert not (tmp_path / "evil.py").exists()


@pytest.mark.parametrize("name", ["../evil.py", "/tmp/evil.py", "a/../../evil.py"])
def test_paths_outside_the_root_are_refused_in_tars(tmp_path: Path, name: str) -> None:
    with pytest.raises(ArchiveError, match="root|absolute"):
        unpack_submission(make_tar([(name, b"x")]), "bot.tar.gz", tmp_path / "app")


def test_symbolic_links_are_refused_in_zips(tmp_path: Path) -> None:
    data = make_zip({"main.py": b"x"}, symlink=("passwd", "/etc/passwd"))
    with pytest.raises(ArchiveError, match="links"):
        unpack_submission(data, "bot.zip", tmp_path / "app")


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE])
def test_links_are_refused_in_tars(tmp_path: Path, kind: bytes) -> None:
    link = tarfile.TarInfo("escape")
    link.type = kind
    link.linkname = "/etc/passwd"
    with pytest.raises(ArchiveError, match="links"):
        unpack_submission(make_tar([link, ("main.py", b"x")]), "bot.tar.gz", tmp_path / "app")
    assert not (tmp_path / "app" / "escape").exists()


def test_devices_and_fifos_are_refused(tmp_path: Path) -> None:
    fifo = tarfile.TarInfo("pipe")
    fifo.type = tarfile.FIFOTYPE
    with pytest.raises(ArchiveError, match="only files and directories"):
        unpack_submission(make_tar([fifo]), "bot.tar.gz", tmp_path / "app")


def test_an_upload_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    limits = ArchiveLimits(max_upload_bytes=1000)
    with pytest.raises(ArchiveError, match="upload of 2000 bytes"):
        unpack_submission(b"#" * 2000, "bot.py", tmp_path / "app", limits)


def test_a_zip_bomb_stops_at_the_unpacked_limit(tmp_path: Path) -> None:
    data = make_zip({"big.txt": b"\0" * (4 << 20)})  # compresses to a few KiB
    assert len(data) < 64 * 1024
    with pytest.raises(ArchiveError, match="unpacked size"):
        unpack_submission(data, "bot.zip", tmp_path / "app", ArchiveLimits(max_total_bytes=1 << 20))


def test_too_many_files_are_refused(tmp_path: Path) -> None:
    data = make_zip({f"f{i}.py": b"" for i in range(30)})
    with pytest.raises(ArchiveError, match="more than 20 files"):
        unpack_submission(data, "bot.zip", tmp_path / "app", ArchiveLimits(max_files=20))


@pytest.mark.parametrize("filename", ["bot.zip", "bot.tar.gz"])
def test_something_that_is_not_an_archive_is_refused(tmp_path: Path, filename: str) -> None:
    with pytest.raises(ArchiveError, match="not a valid"):
        unpack_submission(b"\x1f\x8bthis is not gzip" if filename.endswith("gz") else b"PK\x03\x04junk",
                          filename, tmp_path / "app")


def test_an_empty_upload_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="empty"):
        unpack_submission(b"", "bot.py", tmp_path / "app")
