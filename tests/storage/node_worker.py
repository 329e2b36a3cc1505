"""One arena node's share of a tournament, at the store level: claim a slot,
"play" it (a match with a few event batches), renew the lease meanwhile,
finish it with its slot. Prints one line per step for the test to follow.

    python node_worker.py DB_URL NODE TOURNAMENT LEASE_S PLAY_S
"""

from __future__ import annotations

import sys
import time

from arena.storage import open_store
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, SlotTakenError, StoredEvent


def main(url: str, node: str, tournament_id: str, lease_s: float, play_s: float) -> None:
    store = open_store(url, node=node)
    batches = 4
    while True:
        lease = store.claim_slot(tournament_id, node, lease_s)
        if lease is None:
            if all(s.match_id is not None for s in store.get_schedule(tournament_id)):
                break
            time.sleep(0.05)  # slots still leased by others: wait for them to end or expire
            continue
        slot = lease.slot
        match_id = f"{tournament_id}-s{slot.slot}-{node}-a{slot.attempts}"
        print(f"claimed {slot.slot} {time.time():.3f}", flush=True)
        store.create_match(MatchRecord(
            id=match_id, game="muushig", players=list(slot.players), rules={}, limits={},
            status=MatchStatus.RUNNING, started_at=time.time(), tournament_id=tournament_id,
            seed=slot.seed))
        lost = False
        for b in range(batches):
            time.sleep(play_s / batches)
            store.append_events(match_id, [StoredEvent(seq=b, at=time.time(), data={"b": b})])
            if not store.renew_lease(tournament_id, slot.slot, node, lease_s):
                lost = True
                break
        if lost:
            store.abort_match(match_id, "lease lost")
            print(f"lost {slot.slot}", flush=True)
            continue
        try:
            store.finish_match(match_id, result={"stars": [1] * 5}, reveal=[],
                               faults=[SeatFaults()] * 5, latency_ms=[[]] * 5,
                               finished_at=time.time(), slot=(tournament_id, slot.slot))
            print(f"finished {slot.slot} {match_id}", flush=True)
        except SlotTakenError:
            store.abort_match(match_id, "slot taken")
            print(f"taken {slot.slot}", flush=True)
    print("done", flush=True)
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
