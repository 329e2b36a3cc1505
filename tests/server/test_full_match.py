"""Full matches over real TCP connections on 127.0.0.1."""

from __future__ import annotations

import asyncio
import random

from arena.games.muushig import replay_record
from arena.storage.base import MatchStatus
from protocol.codec import Encoding
from protocol.deals import verify_reveal
from protocol.sdk.client import BotClient


def random_strategy(seed: int):
    rng = random.Random(seed)

    def strategy(phase, legal, state):
        return rng.choice(legal)

    return strategy


async def _play_five(server, encodings) -> list[BotClient]:
    clients = [BotClient("127.0.0.1", server.port, f"token-{i}", f"bot{i}", random_strategy(i),
                         encoding=enc, max_matches=1, reconnect=False, threaded=False)
               for i, enc in enumerate(encodings)]
    commits: dict[str, dict] = {c.name: {} for c in clients}
    ends: dict[str, dict] = {}

    for client in clients:
        def on_event(info, event, name=client.name):
            payload = event.event if hasattr(event, "event") else event
            if payload["kind"] == "commit":
                commits[name][(payload["round"], payload["hand"])] = payload["commitment"]

        def on_end(info, match_end, name=client.name):
            ends[name] = match_end.to_wire() if hasattr(match_end, "to_wire") else match_end

        client.on_event = on_event
        client.on_match_end = on_end
    async with asyncio.timeout(60):
        await asyncio.gather(*(c.run() for c in clients))
    assert set(ends) == {c.name for c in clients}
    for name, end in ends.items():
        assert verify_reveal(commits[name], end["reveal"]) == []
    return clients


async def test_five_sdk_bots_play_a_full_match(make_server):
    server = await make_server()
    await _play_five(server, [Encoding.MSGPACK] * 5)
    await server.writer.flush()
    # After match_end the bots are back in the lobby and may be seated again
    # before their bye arrives; such a match is aborted, never counted.
    (finished,) = server.store.list_matches(status=MatchStatus.FINISHED)
    record = server.store.get_match(finished.id)
    assert record.status is MatchStatus.FINISHED
    assert sorted(record.players) == [f"bot{i}" for i in range(5)]
    assert sum(record.result["stars"]) == 5
    assert all(len(lat) > 0 for lat in record.latency_ms)
    # The stored log replays to the same result: it is enough to replay the match.
    log = [e.data for e in server.store.get_events(record.id)]
    assert [e.seq for e in server.store.get_events(record.id)] == list(range(len(log)))
    engine = replay_record(record.rules, log)
    assert engine.result() == record.result


async def test_a_json_lines_bot_plays_beside_msgpack_bots(make_server):
    server = await make_server()
    clients = await _play_five(server, [Encoding.JSONL] + [Encoding.MSGPACK] * 4)
    assert clients[0].matches_played == 1
    await server.writer.flush()
    (record,) = server.store.list_matches(status=MatchStatus.FINISHED)


async def test_a_lone_bot_gets_house_bots_after_the_wait(make_server):
    server = await make_server(house_wait_s=0.05)
    client = BotClient("127.0.0.1", server.port, "tok", "lonely", random_strategy(1),
                       max_matches=1, reconnect=False, threaded=False)
    async with asyncio.timeout(30):
        await client.run()
    await server.writer.flush()
    (record,) = server.store.list_matches(status=MatchStatus.FINISHED)
    assert "lonely" in record.players
    assert sum(1 for p in record.players if p.startswith("house-")) == 4
