"""Each game has its rules page and its part of the protocol page, and each
game's pages (its tournaments, its matches, its ladder) link to them."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from arena.games import game_names, get_game
from arena.storage.sqlite import SqliteStore

from . import helpers, helpers_thirteen
from .test_pages_docs import html_of

ROOT = Path(__file__).resolve().parents[2]


def first_heading(source: str) -> str:
    return (ROOT / source).read_text("utf-8").splitlines()[0].removeprefix("# ")


@pytest.mark.parametrize("game", sorted(game_names()))
async def test_the_rules_page_of_each_game_is_its_own_file(client: TestClient, game: str) -> None:
    web = get_game(game).extra["web"]
    html = await html_of(client, f"/rules?game={game}")
    heading = first_heading(web["rules"])
    assert heading.split(",")[0] in html  # the h1 (escaped as the page escapes it)
    assert f"Rendered from <code>{web['rules']}</code>" in html
    for other in set(game_names()) - {game}:
        assert f"Rendered from <code>{get_game(other).extra['web']['rules']}</code>" not in html
        assert f'href="/rules?game={other}"' in html  # the other games' rules are a click away


async def test_thirteen_rules_are_not_muushig(client: TestClient) -> None:
    html = await html_of(client, "/rules?game=thirteen")
    assert "seeds/thirteen.md" in html and "seeds/muushig.md" not in html


async def test_an_unknown_game_has_no_rules_page(client: TestClient) -> None:
    response = await client.get("/rules?game=chess")
    assert response.status == 400


@pytest.mark.parametrize("game", sorted(game_names()))
async def test_the_protocol_part_of_each_game_exists(client: TestClient, game: str) -> None:
    target = get_game(game).extra["web"]["protocol"]
    path, _, anchor = target.partition("#")
    html = await html_of(client, path)
    if anchor:
        assert f'id="{anchor}"' in html


async def test_a_thirteen_match_page_links_thirteens_rules_and_protocol(
        client: TestClient, store: SqliteStore) -> None:
    helpers_thirteen.finish_in_store(store, helpers_thirteen.play_match("t1"))
    html = await html_of(client, "/matches/t1")
    assert 'href="/rules?game=thirteen"' in html
    assert f'href="{get_game("thirteen").extra["web"]["protocol"]}"' in html


async def test_a_muushig_match_page_links_muushigs_rules(client: TestClient,
                                                         store: SqliteStore) -> None:
    helpers.finish_in_store(store, helpers.make_match("m1"))
    html = await html_of(client, "/matches/m1")
    assert 'href="/rules?game=muushig"' in html and "game=thirteen\"" not in html


def test_links_between_documents_reach_the_game_rules_pages() -> None:
    from arena.web import docs

    assert docs._link_target("seeds/thirteen.md") == "/rules?game=thirteen"
    assert docs._link_target("../seeds/muushig.md#scoring") == "/rules?game=muushig#scoring"
