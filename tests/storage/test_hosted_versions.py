"""Hosted versions in the store (both backends): one numbering per bot,
enforced by the database, one builder per version, logs within their keep."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from arena.storage.base import Store


def _record(bot: str = "bot", **fields: Any) -> dict[str, Any]:
    return {"bot": bot, "status": "building", "lang": None, "game": "muushig",
            "filename": "bot.py", "content_hash": "00" * 32, "created_at": time.time(),
            **fields}


def test_two_nodes_submitting_at_once_never_share_a_number(
        open_at: Callable[[], Store]) -> None:
    nodes = [open_at(), open_at()]  # two stores on one database, as two nodes
    numbers: list[int] = []
    failures: list[BaseException] = []
    start = threading.Barrier(len(nodes))

    def submit_many(store: Any) -> None:
        start.wait()
        try:
            for _ in range(10):
                numbers.append(store.add_hosted_version(_record(), b"x")["version"])
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=submit_many, args=(s,)) for s in nodes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    assert sorted(numbers) == list(range(1, 21))
    assert [r["version"] for r in nodes[1].hosted_versions("bot")] == list(range(1, 21))


def test_numbering_is_per_bot(open_at: Callable[[], Store]) -> None:
    store: Any = open_at()
    assert store.add_hosted_version(_record("a"), b"1")["version"] == 1
    assert store.add_hosted_version(_record("b"), b"2")["version"] == 1
    assert store.add_hosted_version(_record("a"), b"3")["version"] == 2
    assert store.hosted_upload("a", 2) == b"3"


def test_one_node_builds_a_version_until_its_claim_runs_out(
        open_at: Callable[[], Store]) -> None:
    a, b = open_at(), open_at()
    number = a.add_hosted_version(_record(), b"x")["version"]  # type: ignore[attr-defined]
    assert a.claim_hosted_build("bot", number, "node-a", 0.5)  # type: ignore[attr-defined]
    assert not b.claim_hosted_build("bot", number, "node-b", 60)  # type: ignore[attr-defined]
    assert a.claim_hosted_build("bot", number, "node-a", 0.5)  # its own: renewed
    deadline = time.monotonic() + 30
    while not b.claim_hosted_build("bot", number, "node-b", 60):  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "node-a's claim never ran out"
        time.sleep(0.1)
    assert not a.claim_hosted_build("bot", number, "node-a", 60)  # type: ignore[attr-defined]


def test_a_finished_version_cannot_be_claimed_and_its_claim_is_gone(
        open_at: Callable[[], Store]) -> None:
    store: Any = open_at()
    record = store.add_hosted_version(_record(), b"x")
    assert store.claim_hosted_build("bot", 1, "node-a", 60)
    store.save_hosted_version({**record, "status": "ready"})
    assert store.hosted_version("bot", 1)["build_node"] is None
    assert not store.claim_hosted_build("bot", 1, "node-b", 60)


def test_a_released_claim_is_free_at_once(open_at: Callable[[], Store]) -> None:
    store: Any = open_at()
    store.add_hosted_version(_record(), b"x")
    assert store.claim_hosted_build("bot", 1, "node-a", 600)
    store.release_hosted_build("bot", 1, "node-a")
    assert store.claim_hosted_build("bot", 1, "node-b", 600)


def test_the_playing_version_is_the_newest_ready_of_a_bot_not_removed(
        open_at: Callable[[], Store]) -> None:
    store: Any = open_at()
    store.add_bot("gone", "h-gone")
    for bot, status in [("a", "ready"), ("a", "ready"), ("a", "failed"), ("b", "building"),
                        ("gone", "ready")]:
        record = store.add_hosted_version(_record(bot), b"x")
        store.save_hosted_version({**record, "status": status})
    store.remove_bot("gone")
    assert [(r["bot"], r["version"]) for r in store.hosted_ready()] == [("a", 2)]
    assert store.hosted_active("a")["version"] == 2
    assert store.hosted_active("b") is None


def test_only_the_newest_stderr_logs_of_a_version_stay(open_at: Callable[[], Store]) -> None:
    store: Any = open_at()
    store.add_hosted_version(_record(), b"x")
    store.keep_hosted_log("bot", 1, "build.log", b"built\n")
    for i in range(5):
        store.keep_hosted_log("bot", 1, f"stderr/m{i}", b"%d" % i, keep=3)
    assert [store.hosted_log("bot", 1, f"stderr/m{i}") for i in range(5)] == \
        [None, None, b"2", b"3", b"4"]
    assert store.hosted_log("bot", 1, "build.log") == b"built\n"  # not a stderr log


def test_dropped_versions_take_their_uploads_and_logs(open_at: Callable[[], Store]) -> None:
    store: Any = open_at()
    for _ in range(2):
        store.add_hosted_version(_record(), b"x")
    store.keep_hosted_log("bot", 1, "build.log", b"log")
    store.note_hosted_match("bot", 2, "m-1")
    store.note_hosted_match("bot", 2, "m-1")
    store.drop_hosted_versions("bot", [1])
    assert store.hosted_version("bot", 1) is None and store.hosted_upload("bot", 1) is None
    assert store.hosted_log("bot", 1, "build.log") is None
    assert store.hosted_version("bot", 2)["matches"] == ["m-1"]
    assert store.add_hosted_version(_record(), b"x")["version"] == 3  # never reused


def test_one_node_plays_a_versions_validation_match(open_at: Callable[[], Store]) -> None:
    a, b = open_at(), open_at()
    record = a.add_hosted_version(_record(status="ready"), b"x")  # type: ignore[attr-defined]
    assert a.claim_hosted_validation("bot", 1, "node-a", 600)  # type: ignore[attr-defined]
    assert not b.claim_hosted_validation("bot", 1, "node-b", 600)  # type: ignore[attr-defined]
    a.save_hosted_version({**record, "validation": {"passed": True}})  # type: ignore[attr-defined]
    assert not a.claim_hosted_validation("bot", 1, "node-a", 600)  # played: nobody again


def test_a_seated_bot_is_seated_by_one_node_until_its_seat_runs_out(
        open_at: Callable[[], Store]) -> None:
    a, b = open_at(), open_at()
    assert a.claim_hosted_seat("bot", "node-a", 600)  # type: ignore[attr-defined]
    assert not b.claim_hosted_seat("bot", "node-b", 600)  # type: ignore[attr-defined]
    assert b.hosted_seats_elsewhere("node-b") == {"bot"}  # type: ignore[attr-defined]
    assert a.hosted_seats_elsewhere("node-a") == set()  # type: ignore[attr-defined]
    assert a.claim_hosted_seat("bot", "node-a", 600)  # type: ignore[attr-defined] # renewed
    assert a.claim_hosted_seat("bot", "node-a", -1)  # type: ignore[attr-defined] # ran out
    assert b.hosted_seats_elsewhere("node-b") == set()  # type: ignore[attr-defined]
    assert b.claim_hosted_seat("bot", "node-b", 600)  # type: ignore[attr-defined]
    assert not a.claim_hosted_seat("bot", "node-a", 600)  # type: ignore[attr-defined]
    # A seat that is not renewed runs out on the database's clock.
    assert a.claim_hosted_seat("other", "node-a", 0.5)  # type: ignore[attr-defined]
    deadline = time.monotonic() + 30
    while not b.claim_hosted_seat("other", "node-b", 60):  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "node-a's seat never ran out"
        time.sleep(0.1)


def test_only_the_node_holding_a_seat_gives_it_back(open_at: Callable[[], Store]) -> None:
    a, b = open_at(), open_at()
    assert a.claim_hosted_seat("bot", "node-a", 600)  # type: ignore[attr-defined]
    b.release_hosted_seat("bot", "node-b")  # type: ignore[attr-defined]
    assert not b.claim_hosted_seat("bot", "node-b", 600)  # type: ignore[attr-defined]
    a.release_hosted_seat("bot", "node-a")  # type: ignore[attr-defined]
    assert b.claim_hosted_seat("bot", "node-b", 600)  # type: ignore[attr-defined]


def test_two_nodes_claiming_one_seat_at_once_one_wins(open_at: Callable[[], Store]) -> None:
    nodes = [open_at(), open_at()]
    for round_ in range(10):
        bot = f"bot{round_}"
        won: list[bool] = []
        start = threading.Barrier(len(nodes))

        def claim(store: Any, node: str) -> None:
            start.wait()
            won.append(store.claim_hosted_seat(bot, node, 600))

        threads = [threading.Thread(target=claim, args=(s, f"node-{i}"))
                   for i, s in enumerate(nodes)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(won) == [False, True], (bot, won)
