"""A person's seat as the table sees it: what a bot's connection is to it.

A :class:`PersonLink` stands where a :class:`~arena.server.connection.BotConnection`
stands for a bot: the table writes the seat's messages to it (JSON Lines,
the same bytes a bot would read: ``match_start``, events in the seat's own
view, requests, errors, ``match_end``), and the person's answers reach the
table through :meth:`PersonLink.answer` like a bot's ``action``. The web
side (``arena.web.play``) reads the messages with :meth:`messages_after`
and waits for new ones with :meth:`wait`.

A page that is gone (``leave``, or no read for ``away_after_s``) closes the
link: the table puts the seat on autopilot. A page that comes back makes a
new link with the person's token, and the table gives it the seat back
(``Table.reattach``) with ``match_start`` and the open request again.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, Final

from arena.server.connection import Identity
from arena.server.seats import Seat, SeatKind
from protocol.codec import Encoding
from protocol.errors import ErrorCode
from protocol.messages import Error

if TYPE_CHECKING:
    from arena.server.connection import BotConnection
    from arena.server.server import ArenaServer
    from arena.server.session import TimeLimits
    from arena.server.table import Table

# A match sends a seat a few thousand messages at most; past this many the
# oldest are dropped (a page reads them as they come; one that reloads
# starts again from match_start and the open request).
MAX_KEPT: Final = 4096


class PersonLink:
    """One page's hold on a person's seat; the table's view of the person."""

    person = True  # Table.reattach: this link takes back a person's seat
    encoding = Encoding.JSONL

    def __init__(self, name: str, token_hash: str, now: float) -> None:
        self.identity = Identity(bot=name, token_hash=token_hash)
        self.closed = False
        self.seated: "Table | None" = None
        self.awaiting_life = False  # (asked by the table; a page is alive while it reads)
        self.last_read = now
        self._messages: list[dict[str, Any]] = []
        self._first_seq = 0  # the seq of _messages[0]
        self._changed = asyncio.Event()

    @property
    def name(self) -> str:
        return self.identity.bot

    # -- what the table calls ------------------------------------------------------
    def send_bytes(self, data: bytes, ends_with_request: bool = False) -> None:
        if self.closed:
            return
        for line in data.splitlines():
            if line:
                self._keep(json.loads(line))

    def send_error(self, code: ErrorCode, message: str, request_id: int | None = None,
                   match: str | None = None) -> None:
        self._keep(Error(code, message, request_id, match).to_wire())

    # -- what the page calls -------------------------------------------------------
    def answer(self, request_id: int, action: Any) -> None:
        """The person's answer to request ``request_id`` (checked by the session)."""
        table = self.seated
        if self.closed or table is None:
            self.send_error(ErrorCode.UNKNOWN_REQUEST,
                            "this page no longer holds the seat; reload the page", request_id)
            return
        table.answer(self, table.match_id, request_id, action)  # type: ignore[arg-type]

    def messages_after(self, seq: int, now: float) -> tuple[list[dict[str, Any]], int]:
        """Messages numbered above ``seq`` (-1: all kept), and the number to
        ask after next time. Reading is what keeps the seat attended."""
        self.last_read = now
        start = max(seq + 1, self._first_seq)
        return self._messages[start - self._first_seq:], self._first_seq + len(self._messages) - 1

    async def wait(self, seq: int, timeout_s: float) -> None:
        """Until a message numbered above ``seq`` is kept, or ``timeout_s``."""
        if self._first_seq + len(self._messages) - 1 > seq or self.closed:
            return
        self._changed.clear()
        try:  # not wait_for: on 3.11 it may swallow a cancel that meets the wake-up
            async with asyncio.timeout(timeout_s):
                await self._changed.wait()
        except TimeoutError:
            pass

    def leave(self) -> None:
        """The page is gone: the seat goes to autopilot (until a page comes back)."""
        if self.closed:
            return
        self.closed = True
        self._changed.set()
        table = self.seated
        if table is not None:
            table.seat_disconnected(self)  # type: ignore[arg-type]

    def _keep(self, message: dict[str, Any]) -> None:
        messages = self._messages
        messages.append(message)
        if len(messages) > MAX_KEPT:
            drop = len(messages) - MAX_KEPT
            del messages[:drop]
            self._first_seq += drop
        self._changed.set()


def start_person_table(server: "ArenaServer", link: PersonLink, *, game: str, seat: int,
                       limits: "TimeLimits", tournament_id: str, house_pace_s: float,
                       others: "list[BotConnection | None]",
                       house_kind: str | None = None) -> "Table":
    """Start a table of ``game`` with ``link``'s person in seat ``seat`` on
    ``limits`` of their own, the bots' connections of ``others`` in the
    other seats in order (None: a house bot of ``house_kind``, else the
    server's), house moves ``house_pace_s``
    apart. The table is the server's like any other (storage, live, replay)."""
    spec = server.spec_of(game)
    seating = server.seating
    # The lobby's rules of this game (the server's configured ones): the
    # opted-in bots came for them, and match_start.rules tells the page.
    options = seating.lobby_rules(game)
    rules = seating.match_rules(spec, options)
    kind = seating.house_kind(spec, house_kind)
    seats: list[Seat] = []
    bots = iter(others)
    n_house = 0
    for index in range(spec.n_seats):
        if index == seat:
            seats.append(Seat(index=index, name=link.name, kind=SeatKind.PERSON,
                              house=seating.house(kind, spec, rules),
                              token_hash=link.identity.token_hash, conn=link,  # type: ignore[arg-type]
                              limits=limits))
            continue
        conn = next(bots)
        if conn is None:
            n_house += 1
            seats.append(Seat(index=index, name=f"house-{kind}-{n_house}", kind=SeatKind.HOUSE,
                              house=seating.house(kind, spec, rules)))
        else:
            seats.append(seating.remote_seat(index, conn, spec, rules))
    table = server.runner.new_table(seats, spec=spec, rules=options, tournament_id=tournament_id)
    table.house_pace_s = house_pace_s
    server.runner.launch(table)
    return table
