"""The match session's rules with a fake clock: no sockets, no event loop.

Every test drives :class:`MatchSession` by hand -- ``start``, ``answer``,
``deadline``, ``disconnect``, ``reconnect`` at chosen times -- and reads
what it would send to each seat.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from arena.games import get_game
from arena.games.base import CheckedAction, DealInfo, IllegalActionError, StaleActionError
from protocol.deals import commitment
from arena.server.seats import AutopilotReason, Seat, SeatKind
from arena.server.session import TimeLimits, MatchSession, SessionState
from protocol.codec import Decoder, Encoding

MUUSHIG = get_game("muushig")
JSONL = Encoding.JSONL


def first_option(phase: str, options: Any, state: dict) -> Any:
    return options[0] if isinstance(options, list) else 0


class Harness:
    """A session whose remote seats read JSON Lines; ``inbox[seat]`` holds
    every message that seat was sent, in order."""

    def __init__(self, engine: Any = None, *, remote: int = 1, decision_ms: int = 1000,
                 bank_ms: int = 0, timeouts: int = 3, grace: float = 5.0) -> None:
        self.engine = engine or MUUSHIG.new_match({"max_hands": 2}, random.Random(11), None)
        n = self.engine.n_seats
        self.seats = [Seat(index=i, name=f"s{i}", kind=SeatKind.REMOTE if i < remote else SeatKind.HOUSE,
                           house=first_option, token_hash=f"h{i}") for i in range(n)]
        self.session = MatchSession(
            match_id="m1", game="test", engine=self.engine, seats=self.seats,
            limits=TimeLimits(decision_ms, bank_ms, timeouts),
            encodings=[JSONL if i < remote else None for i in range(n)], abandon_grace_s=grace)
        self.decoders = [Decoder.for_client(JSONL) for _ in range(n)]
        self.inbox: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        self.records: list[dict[str, Any]] = []
        self.public: list[dict[str, Any]] = []
        self.steps: list[Any] = []  # every step the session handed over

    def drain(self) -> None:
        step = self.session.step()  # as the table takes it
        self.steps.append(step)
        for write in step.writes:
            decoder = self.decoders[write.seat]
            decoder.receive_data(write.data)
            while (message := decoder.next_message()) is not None:
                self.inbox[write.seat].append(message)
        self.records += [json.loads(text) for text in step.records]
        self.public += [public for public, _ in step.public]

    def houses(self, now: float) -> None:
        """Play house moves until a remote seat is asked (or the end)."""
        self.drain()
        while self.session.house_due:
            self.session.play_house(now)
            self.drain()

    def start(self, now: float = 0.0) -> None:
        self.session.start(now)
        self.houses(now)

    def last_request(self, seat: int) -> dict[str, Any]:
        return [m for m in self.inbox[seat] if m["type"] == "request"][-1]

    def open_request(self, seat: int) -> dict[str, Any] | None:
        request = self.session._pending.get(seat)
        return request.wire if request is not None else None

    def answer(self, seat: int, action: Any, now: float, request: dict | None = None) -> None:
        request = request or self.last_request(seat)
        self.session.answer(seat, request["id"], action, now)
        self.houses(now)

    def events(self, seat: int, kind: str) -> list[dict[str, Any]]:
        return [m["event"] for m in self.inbox[seat]
                if m["type"] == "event" and m["event"]["kind"] == kind]

    def errors(self, seat: int) -> list[dict[str, Any]]:
        return [m for m in self.inbox[seat] if m["type"] == "error"]


def started(**kw: Any) -> Harness:
    """Started and waiting for a remote seat's answer."""
    h = Harness(**kw)
    h.start()
    assert any(h.open_request(s.index) for s in h.seats if s.kind is SeatKind.REMOTE)
    return h


# -- time -----------------------------------------------------------------------


def test_the_deadline_is_decision_time_plus_the_bank():
    h = started(decision_ms=1000, bank_ms=500)
    assert h.last_request(0)["deadline_ms"] == 1500
    assert h.session.next_deadline() == pytest.approx(1.5)


def test_time_over_the_decision_time_comes_out_of_the_bank():
    h = started(decision_ms=1000, bank_ms=500)
    first = h.last_request(0)
    h.answer(0, first["legal"][0], now=1.2)  # 200 ms over
    assert h.seats[0].bank_ms == pytest.approx(300)
    assert h.seats[0].latencies_ms == [pytest.approx(1200)]
    second = h.last_request(0)
    assert second["id"] != first["id"] and second["deadline_ms"] == 1300


def test_an_answer_within_the_decision_time_costs_the_bank_nothing():
    h = started(decision_ms=1000, bank_ms=500)
    h.answer(0, h.last_request(0)["legal"][0], now=0.9)
    assert h.seats[0].bank_ms == 500


def test_nothing_is_due_before_the_deadline():
    h = started(decision_ms=1000)
    h.session.deadline(0.999)
    h.drain()
    assert h.events(0, "timeout") == [] and h.open_request(0) is not None


def test_at_the_deadline_the_default_is_applied_and_every_seat_told():
    h = started(decision_ms=1000, bank_ms=500, remote=2)
    request = h.open_request(0) or h.open_request(1)
    seat = 0 if h.open_request(0) else 1
    h.session.deadline(1.5)
    h.houses(1.5)
    timeout = {"kind": "timeout", "seat": seat, "phase": request["phase"]}
    assert timeout in h.events(0, "timeout") and timeout in h.events(1, "timeout")
    assert h.seats[seat].bank_ms == 0 and h.seats[seat].timeouts == 1
    default = {"kind": "action", "seat": seat, "phase": request["phase"], "source": "default"}
    assert any(r.items() >= default.items() for r in h.records)


def test_consecutive_timeouts_put_the_seat_on_autopilot():
    h = started(decision_ms=100, timeouts=2)
    h.session.deadline(0.1)
    h.houses(0.1)
    assert h.seats[0].autopilot is None
    h.session.deadline(h.session.next_deadline())
    h.houses(1.0)
    assert h.events(0, "autopilot") == [{"kind": "autopilot", "seat": 0, "reason": "timeouts"}]
    assert h.seats[0].autopilot is AutopilotReason.TIMEOUTS
    requests = len([m for m in h.inbox[0] if m["type"] == "request"])
    assert requests == 2 and h.open_request(0) is None


def test_an_answer_resets_the_count_of_timeouts_in_a_row():
    h = started(decision_ms=100, timeouts=2)
    h.session.deadline(0.1)
    h.houses(0.1)
    h.answer(0, h.last_request(0)["legal"][0], now=0.15)
    h.session.deadline(h.session.next_deadline())
    h.houses(1.0)
    assert h.seats[0].autopilot is None and h.seats[0].timeouts == 2


# -- answers -------------------------------------------------------------------------


def test_an_illegal_answer_gets_illegal_action_and_the_request_stays_open():
    h = started()
    request = h.last_request(0)
    at = h.session.next_deadline()
    h.answer(0, "maybe", now=0.1)
    (error,) = h.errors(0)
    assert (error["code"], error["id"], error["match"]) == ("illegal_action", request["id"], "m1")
    assert h.open_request(0) is request or h.open_request(0)["id"] == request["id"]
    assert h.session.next_deadline() == at and h.seats[0].illegal == 1
    h.answer(0, request["legal"][0], now=0.2, request=request)
    assert h.open_request(0) is None or h.open_request(0)["id"] != request["id"]


def test_an_answer_to_a_settled_request_is_late():
    h = started(decision_ms=100)
    request = h.last_request(0)
    h.session.deadline(0.1)
    h.answer(0, request["legal"][0], now=0.2, request=request)
    (error,) = h.errors(0)
    assert (error["code"], error["id"], error["match"]) == ("late", request["id"], "m1")


def test_an_id_never_sent_to_the_seat_is_unknown_request():
    h = started()
    h.session.answer(0, 999, "enter", 0.1)
    h.drain()
    (error,) = h.errors(0)
    assert (error["code"], error["id"], error["match"]) == ("unknown_request", 999, "m1")
    assert h.open_request(0) is not None


# -- faults -------------------------------------------------------------------------------


def test_a_drop_puts_the_seat_on_autopilot_and_its_house_bot_answers():
    h = started(remote=2)
    asked = 0 if h.open_request(0) else 1
    other = 1 - asked
    h.session.disconnect(asked, 0.1)
    h.houses(0.1)
    autopilot = {"kind": "autopilot", "seat": asked, "reason": "disconnected"}
    assert autopilot in h.events(other, "autopilot")
    assert any(r.get("kind") == "action" and r.get("source") == "autopilot"
               and r.get("seat") == asked for r in h.records)
    assert h.seats[asked].disconnects == 1 and h.open_request(asked) is None


def test_a_bot_that_comes_back_gets_its_seat_and_everyone_is_told():
    h = started(remote=2, decision_ms=100, timeouts=1)
    asked = 0 if h.open_request(0) else 1
    other = 1 - asked
    h.session.deadline(0.1)  # one timeout: autopilot
    h.houses(0.1)
    assert h.seats[asked].autopilot is AutopilotReason.TIMEOUTS
    h.inbox[asked].clear()
    assert h.session.reconnect(asked, JSONL, 0.2)
    h.houses(0.2)
    assert h.inbox[asked][0]["type"] == "match_start"
    returned = {"kind": "autopilot", "seat": asked, "reason": "returned"}
    assert returned in h.events(other, "autopilot") and returned in h.events(asked, "autopilot")
    assert h.seats[asked].autopilot is None
    # Its next decision is asked of it again.
    for _ in range(200):
        if h.open_request(asked) is not None or h.session.over:
            break
        h.answer(other, h.open_request(other)["legal"][0], now=0.3)
    assert h.open_request(asked) is not None


def test_a_returning_bot_gets_the_open_request_with_the_time_left():
    h = started(decision_ms=1000, grace=5.0)
    request = h.last_request(0)
    h.session.disconnect(0, 0.25)  # the only bot: the match waits
    assert h.session.state is SessionState.WAITING
    h.session.reconnect(0, JSONL, 2.25)
    h.drain()
    resent = h.last_request(0)
    assert resent["id"] == request["id"] and resent["deadline_ms"] == 750
    assert h.session.state is SessionState.RUNNING


def test_a_match_every_bot_left_waits_for_the_grace_then_is_aborted():
    h = started(grace=5.0)
    h.session.disconnect(0, 1.0)
    h.drain()
    assert h.session.next_deadline() == 6.0 and not h.session.house_due
    h.session.deadline(5.9)
    assert h.session.state is SessionState.WAITING
    h.session.deadline(6.0)
    assert h.session.state is SessionState.ABORTED
    assert h.session.abort_reason == "every bot disconnected"


def test_a_match_no_bot_played_is_aborted_at_its_end():
    h = started(decision_ms=10, timeouts=1)
    h.session.deadline(0.01)
    h.houses(0.01)
    assert h.session.state is SessionState.ABORTED
    assert h.session.abort_reason == "no seat was played by its bot"


# -- order -----------------------------------------------------------------------------------


def test_match_start_comes_first_and_events_wait_for_the_next_request():
    h = Harness()
    h.session.disconnect(0, 0.0)  # before the start: announced after match_start
    h.session.reconnect(0, JSONL, 0.0)
    h.start()
    kinds = [m["type"] for m in h.inbox[0]]
    assert kinds[0] == "match_start"
    # Everything before the first request came in one write, ending with it.
    assert kinds[-1] == "request" and "event" in kinds


def test_a_seat_dropped_before_the_start_is_announced_after_match_start():
    h = Harness(remote=2)
    h.session.disconnect(1, 0.0)
    h.start()
    assert h.inbox[0][0]["type"] == "match_start"
    assert {"kind": "autopilot", "seat": 1, "reason": "disconnected"} in h.events(0, "autopilot")
    assert h.records[0] == {"kind": "autopilot", "seat": 1, "reason": "disconnected"}


def test_the_timeout_event_comes_before_the_default_actions_events():
    h = started(decision_ms=100)
    h.session.deadline(0.1)
    h.houses(0.1)
    kinds = [r["kind"] for r in h.records]
    at = kinds.index("timeout")
    assert kinds[at + 1] == "action"  # the default, then what it caused


def test_nothing_reaches_a_seat_after_match_end():
    h = started()
    while not h.session.over:
        request = h.open_request(0)
        h.answer(0, request["legal"][0], now=0.1, request=request)
    assert h.session.state is SessionState.ENDED
    h.session.finish()
    h.drain()
    assert h.inbox[0][-1]["type"] == "match_end"
    h.session.answer(0, h.last_request(0)["id"], "enter", 0.2)
    h.session.disconnect(0, 0.2)
    h.drain()
    assert h.inbox[0][-1]["type"] == "match_end"


class CheckSpy:
    """The match's engine, with every ``check_for`` result and ``apply``
    argument noted (the session calls the engine through its interface)."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.checked: list[tuple[int, Any]] = []
        self.applied: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def check_for(self, seat: int, action: Any) -> Any:
        checked = self._engine.check_for(seat, action)
        self.checked.append((seat, checked))
        return checked

    def apply(self, checked: Any) -> Any:
        self.applied.append(checked)
        return self._engine.apply(checked)


def test_each_move_is_checked_once_and_that_check_is_what_is_applied():
    spy = CheckSpy(MUUSHIG.new_match({"max_hands": 2}, random.Random(11), None))
    h = Harness(spy, remote=2)
    h.start()
    h.session.disconnect(1, 0.1)  # seat 1's moves come from autopilot from now on
    h.houses(0.1)
    while not h.session.over:
        request = h.open_request(0)
        h.answer(0, request["legal"][-1], now=0.2, request=request)
    # The very objects checked, in order: nothing applied unchecked, nothing checked twice.
    assert len(spy.checked) == len(spy.applied)
    assert all(c is a for (_, c), a in zip(spy.checked, spy.applied))
    assert sum(1 for seat, _ in spy.checked if seat == 0) == len(h.seats[0].latencies) > 0
    # Bot, autopilot and house moves all go the same way.
    assert {seat for seat, _ in spy.checked} == set(range(spy.n_seats))


# -- several seats at once --------------------------------------------------------------------


class Shown:
    def __init__(self, kind: str, **fields: Any) -> None:
        self.kind = kind
        self.payload = {"kind": kind, **fields}

    def for_seat(self, seat: int) -> dict:
        return self.payload

    def for_public(self) -> dict:
        return self.payload

    def for_record(self) -> dict:
        return self.payload


class Simultaneous:
    """Two seats each pick 0-3 at the same time, for two rounds."""

    game = "simultaneous"
    n_seats = 2
    rules: dict = {}

    def __init__(self) -> None:
        self.round = 0
        self.owed = {0, 1}
        self.chosen: dict[int, int] = {}

    def start(self) -> list:
        return [DealEvent(self.deal), Shown("round_start", round=0)]

    deal = DealInfo(deck=("A", "B", "C"), label={"deal": 0})

    @property
    def finished(self) -> bool:
        return self.round >= 2

    @property
    def to_act(self) -> tuple[int, ...]:
        return () if self.finished else tuple(sorted(self.owed))

    def phase_for(self, seat: int) -> str:
        return "arrange"

    def request_for(self, seat: int) -> dict:
        return {"constraints": {"max": 3}}

    def check_for(self, seat: int, action: Any) -> CheckedAction[None]:
        if seat not in self.owed or action not in (0, 1, 2, 3):
            raise IllegalActionError(f"pick 0-3, not {action!r}")
        return CheckedAction(self, seat, self.round, action, None)

    def apply(self, checked: CheckedAction[None]) -> list:
        seat = checked.seat
        if checked.decision != self.round or seat not in self.owed:
            raise StaleActionError(f"seat {seat}'s pick is not pending")
        self.chosen[seat] = checked.action
        self.owed.discard(seat)
        if self.owed:
            return []
        picks = [self.chosen[0], self.chosen[1]]
        self.round += 1
        self.owed = set() if self.finished else {0, 1}
        return [Shown("reveal", picks=picks)]

    def default_for(self, seat: int) -> Any:
        return 0

    def observation(self, seat: int) -> dict:
        return {"round": self.round}

    def result(self) -> dict:
        return {"ranks": [1, 1]}

    def deals(self) -> list:
        return [self.deal]


class DealEvent:
    kind = "deal"

    def __init__(self, deal: DealInfo) -> None:
        self.deal = deal

    def for_seat(self, seat: int) -> None:
        return None

    def for_public(self) -> None:
        return None

    def for_record(self) -> dict:
        return {"kind": "deal", **self.deal.label, "deck": list(self.deal.deck)}


def test_two_seats_asked_at_once_each_have_their_own_request_and_deadline():
    h = Harness(Simultaneous(), remote=2, decision_ms=1000, bank_ms=1000)
    h.start()
    r0, r1 = h.last_request(0), h.last_request(1)
    assert r0["id"] != r1["id"] and r0["constraints"] == {"max": 3} and "legal" not in r0
    h.answer(0, 2, now=1.5)  # 500 ms from seat 0's bank only
    assert h.seats[0].bank_ms == 500 and h.seats[1].bank_ms == 1000
    assert h.events(0, "reveal") == [] and h.open_request(1) is not None
    h.session.deadline(2.0)  # seat 1's deadline: its default
    h.drain()
    assert {"kind": "timeout", "seat": 1, "phase": "arrange"} in h.events(0, "timeout")
    assert h.events(0, "reveal") == [{"kind": "reveal", "picks": [2, 0]}]
    # The next round asks both again, each with its own bank.
    assert h.last_request(0)["deadline_ms"] == 1500 and h.last_request(1)["deadline_ms"] == 1000


def test_an_unattended_seat_of_a_simultaneous_decision_is_played_by_its_house_bot():
    h = Harness(Simultaneous(), remote=2)
    h.start()
    h.session.disconnect(1, 0.1)
    h.houses(0.1)
    h.answer(0, 3, now=0.2)
    assert h.events(0, "reveal")[0] == {"kind": "reveal", "picks": [3, 0]}


def test_a_deal_is_committed_and_revealed_under_its_label():
    h = Harness(Simultaneous(), remote=2)
    h.start()
    (commit,) = h.events(0, "commit")
    assert list(commit) == ["kind", "deal", "commitment"] and commit["deal"] == 0
    while not h.session.over:
        for seat in (0, 1):
            if h.open_request(seat) is not None:
                h.answer(seat, 1, now=0.1, request=h.open_request(seat))
    (reveal,) = h.session.reveal
    assert list(reveal) == ["deal", "salt", "deck"] and reveal["deck"] == ["A", "B", "C"]
    assert commitment(reveal["salt"], reveal["deck"]) == commit["commitment"]


def test_a_muushig_deal_is_labelled_by_round_and_hand():
    assert DealInfo(1, 2, ("7H",)).label == {"round": 1, "hand": 2}
