"""A throwaway PostgreSQL cluster for tests: ``initdb`` into a temporary
folder, a server listening only on a Unix socket in that folder, one
database per test, everything stopped and deleted at the end.

PostgreSQL refuses to run as root; as root the cluster runs as the
``postgres`` user (``ARENA_PG_USER`` names another). Binaries are looked up
on PATH, then in ``/usr/lib/postgresql/<version>/bin`` (Debian's place).
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


# Runs beside the tests: if the test process dies without stopping the
# cluster (SIGKILL, a crash), this stops it and deletes its folder.
WATCHDOG = """
import os, shutil, subprocess, sys, time
parent, command, root = int(sys.argv[1]), sys.argv[2:-1], sys.argv[-1]
while True:
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        break
    time.sleep(0.5)
subprocess.run(command, capture_output=True, timeout=60)
shutil.rmtree(root, ignore_errors=True)
"""


TEST_DB = "arena_tests"


class ClusterUnavailable(Exception):
    """PostgreSQL cannot be had here; the message says why."""


def find_bin_dir() -> Path:
    initdb = shutil.which("initdb")
    if initdb:
        return Path(os.path.realpath(initdb)).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    raise ClusterUnavailable("no PostgreSQL server binaries (initdb, pg_ctl): install them "
                             "with 'apt-get install -y postgresql' (scripts/test does)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgCluster:
    bin_dir: Path
    root: Path
    port: int
    run_as: str | None  # the user the server runs as, when we are root
    _counter: itertools.count = field(default_factory=itertools.count)
    _stopped: bool = False
    _watchdog: subprocess.Popen[bytes] | None = None
    _test_db_ready: bool = False

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql:///{dbname}?host={self.root}&port={self.port}&user=arena"

    def _command(self, *args: str) -> list[str]:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        return command

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self._command(*args), capture_output=True, text=True, timeout=120)

    @classmethod
    def start(cls) -> "PgCluster":
        bin_dir = find_bin_dir()
        run_as = None
        if os.geteuid() == 0:
            run_as = os.environ.get("ARENA_PG_USER", "postgres")
            try:
                user = pwd.getpwnam(run_as)
            except KeyError:
                raise ClusterUnavailable(
                    f"running as root, and there is no user {run_as!r} to run PostgreSQL as "
                    "(initdb refuses root): create one with 'useradd --system postgres' or "
                    "name one in ARENA_PG_USER") from None
        root = Path(tempfile.mkdtemp(prefix="arena-pg-"))
        if run_as is not None:
            os.chown(root, user.pw_uid, user.pw_gid)
        cluster = cls(bin_dir=bin_dir, root=root, port=_free_port(), run_as=run_as)
        atexit.register(cluster.stop)  # also when the session ends abnormally
        try:
            done = cluster._run("initdb", "-D", str(cluster.data_dir), "-U", "arena",
                                "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync")
            if done.returncode != 0:
                raise ClusterUnavailable(f"initdb failed: {done.stderr.strip()[-500:]}")
            options = (f"-k {root} -p {cluster.port} -c listen_addresses='' -c fsync=off"
                       " -c full_page_writes=off -c max_connections=200")
            done = cluster._run("pg_ctl", "-D", str(cluster.data_dir), "-l",
                                str(root / "server.log"), "-w", "-t", "60", "-o", options,
                                "start")
            if done.returncode != 0:
                log = (root / "server.log").read_text(errors="replace")[-1500:] \
                    if (root / "server.log").exists() else ""
                raise ClusterUnavailable(f"pg_ctl start failed: {done.stderr.strip()} {log}")
            stop = cluster._command("pg_ctl", "-D", str(cluster.data_dir), "-m", "immediate",
                                    "-w", "stop")
            cluster._watchdog = subprocess.Popen(
                [sys.executable, "-c", WATCHDOG, str(os.getpid()), *stop, str(root)],
                start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def admin(self, dbname: str = "postgres"):  # noqa: ANN201 - a psycopg connection
        import psycopg

        return psycopg.connect(self.url(dbname), autocommit=True)

    def create_database(self, prefix: str = "t") -> str:
        """A fresh, empty place for one store: a schema of its own in the
        shared test database (100 times faster to make than a database),
        named by the URL's ``search_path``."""
        if not self._test_db_ready:
            with self.admin() as conn:
                conn.execute(f'CREATE DATABASE "{TEST_DB}"')
            self._test_db_ready = True
        name = f"{prefix}_{os.getpid()}_{next(self._counter)}"
        with self.admin(TEST_DB) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return self.url(TEST_DB) + f"&options=-csearch_path%3D{name}"

    def drop_database(self, url: str) -> None:
        name = url.rsplit("%3D", 1)[1]
        with self.admin(TEST_DB) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    def pg_ctl(self, action: str, *extra: str) -> None:
        """``pg_ctl stop`` / ``start`` / ``restart`` (for outage tests)."""
        args = ["pg_ctl", "-D", str(self.data_dir), "-w", "-t", "60", *extra, action]
        if action in ("start", "restart"):
            args[1:1] = ["-l", str(self.root / "server.log"), "-o",
                         f"-k {self.root} -p {self.port} -c listen_addresses='' -c fsync=off"
                         " -c full_page_writes=off -c max_connections=200"]
        done = self._run(*args)
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl {action} failed: {done.stderr.strip()}")

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if (self.data_dir / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
