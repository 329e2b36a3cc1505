"""Protocol §6: "The same record is kept by the server and served over HTTP."""

from __future__ import annotations

import aiohttp

from arena.app import http_port_of
from tests.conformance_server.conftest import joined
from tests.conformance_server.wire import JSONL


async def test_the_match_end_record_is_served_over_http(make_server):
    server = await make_server(house_wait_s=0.0, http_port=0)
    bot = await joined(server.port, "archivist", JSONL)
    end = await bot.play_to_end()
    await bot.close()
    await server.writer.flush()
    async with aiohttp.ClientSession() as http:
        url = f"http://127.0.0.1:{http_port_of(server)}/api/matches/{end['match']}"
        async with http.get(url) as response:
            assert response.status == 200
            detail = await response.json()
    match = detail["match"]
    assert match["status"] == "finished"
    assert match["result"] == end["result"]
    assert match["reveal"] == end["reveal"]
