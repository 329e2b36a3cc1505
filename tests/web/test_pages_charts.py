"""Plots: stars per match over the tournament for each bot, and each bot's
rating with its uncertainty band, on the tournament and bot pages."""

from __future__ import annotations

import re

from aiohttp.test_utils import TestClient

from arena.storage.sqlite import SqliteStore
from arena.web.charts import Series, line_chart

from .test_pages_bots import DEMO, demo_tournament, html_of


def charts_in(html: str) -> dict[str, str]:
    """SVG charts by their title."""
    return {re.search(r"<title[^>]*>(.*?)</title>", svg).group(1): svg
            for svg in re.findall(r"<svg class=\"chart.*?</svg>", html, re.S)}


async def test_the_tournament_page_plots_every_bot(client: TestClient,
                                                   store: SqliteStore) -> None:
    demo_tournament(store, matches=3)
    standings = (await (await client.get("/api/tournaments/demo/standings")).json())["standings"]
    charts = charts_in(await html_of(client, "/tournaments/demo"))
    stars = charts["Stars per match over the tournament"]
    ratings = charts["Rating over the tournament"]
    entrants = [*DEMO[:4], "house-heuristic"]
    for bot in entrants:
        assert f'data-series="{bot}"' in stars and f'data-series="{bot}"' in ratings
    assert ratings.count('class="band') == len(entrants)  # one uncertainty band per bot
    for row in standings:  # the last point of each line is the standings' figure
        assert f"{row['bot']}: {row['stars_per_match']:.2f} after {row['matches']}" in stars
        assert f"{row['bot']}: {row['rating_mu']:.1f} ± {row['rating_sigma']:.1f}" in ratings


async def test_the_bot_page_plots_its_stars_and_rating(client: TestClient,
                                                       store: SqliteStore) -> None:
    demo_tournament(store, matches=3)
    charts = charts_in(await html_of(client, "/bots/c-jsonl?scope=demo"))
    assert "Stars per match of c-jsonl" in charts
    assert "Rating history of c-jsonl" in charts
    assert charts["Stars per match of c-jsonl"].count("<circle") == 3


def test_a_chart_is_accessible_and_escapes_names() -> None:
    svg = line_chart("Stars <per> match", [Series("a<b", [(1, 0.0), (2, 1.0)])],
                     x_label="matches", y_label="stars per match")
    assert svg.startswith('<svg class="chart') and 'role="img"' in svg
    assert "a&lt;b" in svg and "a<b" not in svg
    assert "<desc" in svg
    assert "No data" in line_chart("Empty", [], x_label="x", y_label="y")


async def test_the_tournament_charts_have_a_fragment_for_live_updates(
        client: TestClient, store: SqliteStore) -> None:
    demo_tournament(store, matches=2)
    html = await html_of(client, "/partials/charts?tournament=demo")
    assert html.count('<svg class="chart"') == 2
    assert (await client.get("/partials/charts")).status == 400
    assert (await client.get("/partials/charts?tournament=nope")).status == 404
