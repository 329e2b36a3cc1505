"""Matches per minute of one arena node against three on one PostgreSQL,
with the node tests' tournament (two local Python bots, three house bots,
40 matches). Not a test; run by hand:

    python tests/nodes/measure.py [TABLES]   (five matches per table; default 8)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from storage.pg_cluster import PgCluster  # noqa: E402

from nodes.nodes import start_node, stop_all, write_tournament  # noqa: E402


def run(cluster: PgCluster, n_nodes: int, folder: Path, tables: int) -> float:
    url = cluster.create_database("m")
    config = write_tournament(folder, tables=tables, name=f"measure-{n_nodes}")
    started = time.time()
    nodes = [start_node(config, url, f"node-{i}", folder) for i in range(1, n_nodes + 1)]
    try:
        for node in nodes:
            assert node.proc.wait(timeout=300) == 0, node.log_path.read_text()[-2000:]
    finally:
        stop_all(nodes)
    return time.time() - started


def main() -> None:
    tables = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    matches = tables * 5
    cluster = PgCluster.start()
    try:
        for n in (1, 3):
            with tempfile.TemporaryDirectory() as folder:
                seconds = run(cluster, n, Path(folder), tables)
            print(f"{n} node(s): {matches} matches in {seconds:.1f} s = "
                  f"{matches * 60 / seconds:.0f} "
                  "matches/min (process start included)", flush=True)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
