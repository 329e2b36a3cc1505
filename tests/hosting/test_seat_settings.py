"""The hosted seat times are an organiser's settings: how long a tournament
entrant waits for its bot's seat, and when a node that cannot renew a seat
gives it up. Both are checked when given (the give-up must come before the
lease runs out) and reach the keepers that use them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable

import pytest

from arena.cli import _parser, main
from arena.hosting.cli import seat_settings
from arena.hosting.errors import HostingSettingsError, SeatTakenError
from arena.hosting.seats import (ENTRANT_SEAT_WAIT_S, SEAT_GIVE_UP_S, SEAT_LEASE_S, SeatKeeper,
                                 SeatSettings)
from arena.hosting.versions import VersionStore
from arena.storage.base import StorageError
from tests.hosting.test_entrant_seats import Sandboxless, Tokens, stores  # noqa: F401 - fixture
from tests.hosting.test_ladder_seats import ready, until
from tests.storage.conftest import db_location  # noqa: F401 - fixtures


def test_the_defaults_are_five_minutes_and_75_s_of_a_90_s_lease() -> None:
    seats = SeatSettings()
    assert (seats.entrant_wait_s, seats.give_up_s, seats.lease_s) == (300.0, 75.0, 90.0)
    args = _parser().parse_args(["serve", "--hosted"])
    assert seat_settings(args) == seats


def test_serve_and_tournament_take_both_settings() -> None:
    for command in (["serve", "--hosted"], ["tournament", "cup.toml"]):
        args = _parser().parse_args([*command, "--entrant-seat-wait", "40",
                                     "--seat-give-up", "60"])
        assert seat_settings(args) == SeatSettings(give_up_s=60.0, entrant_wait_s=40.0)


@pytest.mark.parametrize("give_up_s", [SEAT_LEASE_S, SEAT_LEASE_S + 10])
def test_a_give_up_at_or_past_the_lease_is_refused(give_up_s: float) -> None:
    with pytest.raises(HostingSettingsError, match="must be below the seat lease"):
        SeatSettings(give_up_s=give_up_s)


def test_a_give_up_before_the_first_renewal_is_refused() -> None:
    with pytest.raises(HostingSettingsError, match="above a third of the seat lease"):
        SeatSettings(give_up_s=SEAT_LEASE_S / 3)


def test_a_negative_entrant_wait_is_refused() -> None:
    with pytest.raises(HostingSettingsError, match="0 s or more"):
        SeatSettings(entrant_wait_s=-1)


def test_serve_refuses_a_give_up_past_the_lease_saying_why(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--hosted", "--db", ":memory:", "--seat-give-up", "95"])
    assert code != 0
    assert "must be below the seat lease (90 s)" in capsys.readouterr().err


async def test_an_entrant_waits_for_its_bots_seat_as_long_as_the_organiser_set(
        stores: Callable[[str], VersionStore], tmp_path: Path) -> None:  # noqa: F811
    a, b = stores("node-a"), stores("node-b")
    ready(a, "solo")
    assert b.claim_seat("solo", 600)  # node B's ladder plays it, for long
    folder = tmp_path / "runs"
    folder.mkdir()
    here = Sandboxless(a, folder, None, Tokens(),  # type: ignore[arg-type]
                       seats=SeatSettings(entrant_wait_s=0.5))
    assert here.seat_wait_s == 0.5 != ENTRANT_SEAT_WAIT_S
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(SeatTakenError, match="another node"):
        # Bounded well below the default five minutes: the setting applies.
        await asyncio.wait_for(here.start_version("solo", 1, "solo.v1"), 60)
    assert loop.time() - started >= 0.5
    assert here.runs == {}


async def test_a_seat_is_given_up_after_the_organisers_give_up_time(
        stores: Callable[[str], VersionStore],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = stores("node-a"), stores("node-b")
    ready(a, "solo")
    lease_s, give_up_s = 9.0, 3.1  # the default share would give up after 7.5 s
    loop = asyncio.get_running_loop()
    lost: list[tuple[float, bool]] = []

    async def on_lost(bot: str) -> None:
        # Still seated in the store: no other node can have started the bot.
        lost.append((loop.time(), b.claim_seat(bot, lease_s)))

    keeper = SeatKeeper(a, lease_s=lease_s, give_up_s=give_up_s, on_lost=on_lost)
    taken = loop.time()
    await keeper.take("solo", "solo.v1")

    def away(bot: str, lease: float) -> bool:
        raise StorageError("the database is away")

    monkeypatch.setattr(a, "claim_seat", away)
    await until(lambda: bool(lost))
    when, taken_elsewhere = lost[0]
    assert taken_elsewhere is False
    assert give_up_s <= when - taken < lease_s * SEAT_GIVE_UP_S / SEAT_LEASE_S
    await keeper.close()


def test_a_keeper_refuses_a_give_up_past_its_lease(tmp_path: Path) -> None:
    with pytest.raises(HostingSettingsError, match="below the seat lease"):
        SeatKeeper(None, lease_s=3.0, give_up_s=3.0)  # type: ignore[arg-type]
