"""Hand-driven thirteen-card bots for the server's TCP tests: they record
every message they receive, so a test can check what a seat was told."""

from __future__ import annotations

import asyncio
import random
import re
from typing import Any

from arena.games.thirteen.bots import make_strong
from tests.server.rawbot import RawBot

CARD = re.compile(r"^[2-9TJQKA][HSDC]$")


def cards_in(value: Any) -> set[str]:
    """Every card string anywhere in a wire value."""
    if isinstance(value, str):
        return {value} if CARD.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(cards_in(v) for v in value)) if value else set()
    return set()


class ThirteenBot(RawBot):
    """Says hello for thirteen; ``silent`` bots never answer a request."""

    def __init__(self, *, silent: bool = False) -> None:
        super().__init__()
        self.silent = silent
        self.rules: dict[str, Any] | None = None

    async def join(self, port: int, name: str, game: str | None = "thirteen") -> dict[str, Any]:
        await self.connect(port)
        hello: dict[str, Any] = {"type": "hello", "protocol": 1, "token": f"tok-{name}",
                                 "name": name}
        if game is not None:
            hello["game"] = game
        await self.send(hello)
        welcome = await self.recv()
        assert welcome is not None and welcome["type"] == "welcome", welcome
        return welcome

    async def play(self, timeout: float = 60.0) -> dict[str, Any]:
        """Arrange like the strong house bot until match_end; return it."""
        starts = [m for m in self.seen if m["type"] == "match_start"]  # read already
        self.rules = starts[-1]["rules"] if starts else None
        arrange = make_strong(random.Random(0), self.rules) if starts else None
        async with asyncio.timeout(timeout):
            while True:
                message = await self.recv(timeout)
                if message is None:
                    raise ConnectionError("server closed the connection")
                if message["type"] == "match_start":
                    self.rules = message["rules"]
                    arrange = make_strong(random.Random(0), self.rules)
                elif message["type"] == "request" and not self.silent:
                    assert arrange is not None
                    await self.answer(message, arrange(message["phase"], message["constraints"],
                                                       message["state"]))
                elif message["type"] == "match_end":
                    return message

    def commits(self) -> dict[tuple[int], str]:
        return {(m["event"]["deal"],): m["event"]["commitment"] for m in self.seen
                if m["type"] == "event" and m["event"]["kind"] == "commit"}

    def foreign_cards_before_showdown(self) -> list[str]:
        """Messages that showed this seat a card not its own before the
        showdown of the deal they belong to (should be none). A deal's
        messages run from the previous showdown to its own; the seat's own
        cards are those of the deal's request."""
        leaks: list[str] = []
        deal: list[dict[str, Any]] = []
        for message in self.seen:
            if message["type"] == "match_end":
                break  # the reveal: every deck, after the last showdown
            if message["type"] == "event" and message["event"]["kind"] == "showdown":
                leaks += _foreign(deal)
                deal = []
            else:
                deal.append(message)
        return leaks + _foreign(deal)

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [m["event"] for m in self.seen
                if m["type"] == "event" and m["event"]["kind"] == kind]


def _foreign(messages: list[dict[str, Any]]) -> list[str]:
    own = set().union(*(set(m["state"]["cards"]) for m in messages if m["type"] == "request"))
    leaks = []
    for message in messages:
        foreign = cards_in(message) - own
        if foreign:
            leaks.append(f"{message['type']} {message.get('event', {}).get('kind', '')} "
                         f"showed {sorted(foreign)}")
    return leaks
