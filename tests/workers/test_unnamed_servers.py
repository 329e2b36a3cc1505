"""Two unnamed ``arena serve --workers`` on one store: their workers take
names derived from their own parent, so neither refuses the other's
workers, and a restarted unnamed server aborts only the matches its dead
workers left."""

from __future__ import annotations


def test_two_unnamed_servers_with_workers_run_side_by_side(served):
    first = served("--any-token", workers=2)
    second = served("--any-token", workers=2)
    try:
        for one in (first, second):
            assert one.proc.poll() is None, one.log_tail()
            assert len(one.workers()) == 2, one.log_tail()
        assert "node name" not in second.log_tail(200)
    finally:
        assert second.stop() == 0, second.log_tail()
        assert first.stop() == 0, first.log_tail()


def test_an_unnamed_servers_workers_are_named_after_it(served):
    one = served("--any-token", workers=2)
    try:
        nodes = {w["node"] for w in one.workers()}
        assert nodes == {f"arena-{one.proc.pid}-w1", f"arena-{one.proc.pid}-w2"}
    finally:
        assert one.stop() == 0, one.log_tail()
