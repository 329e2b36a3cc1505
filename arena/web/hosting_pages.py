"""The hosted versions of a bot, as a section of its page.

Everybody sees each version's number, status, upload time, its validation
match (passed, failed or waiting, linked to the match to replay) and results
(its own standing over the matches it played). The owner pastes the bot's token
into the form under the table; the page then asks the API with it and shows
the failure reasons, file lists and build logs — the token never leaves the
browser except as that request's ``Authorization`` header.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from arena.tournament.standings import compute_standings
from arena.web.ladders import main_game
from arena.web.render import e, match_link, num, when


def _validation(version: Any) -> str:
    """Its validation match: the verdict and the match (the reason of a
    failure is its owner's, in the owner's view below)."""
    result = version.validation
    if result is None:
        return "waiting" if version.status.value == "ready" else "–"
    verdict = "passed" if result.get("passed") else "failed"
    match = result.get("match_id")
    return f"{verdict} ({match_link(str(match), 'replay')})" if match else verdict


def _standing(store: Any, bot: str, match_ids: list[str]) -> dict[str, Any] | None:
    matches = [store.get_match(m) for m in match_ids]
    rows = [r for r in compute_standings(matches, bootstrap_samples=0,
                                         game=main_game(matches)) if r.bot == bot]
    return rows[0].to_dict() if rows else None


def versions_section(request: web.Request, bot: str) -> str:
    """Synchronous, like the page handler it serves: the web runs such
    handlers on a read thread, off the loop that times the bots."""
    from arena.web.hosting_state import HOSTING
    from arena.web.keys import STORE

    hosting = request.app.get(HOSTING)
    if hosting is None:
        return ""
    versions = hosting.versions.versions(bot)
    if not versions:
        return ""
    store = request.app[STORE]
    standings = [_standing(store, bot, v.matches) for v in versions]
    active = hosting.versions.active(bot)
    rows = "".join(
        f'<tr><th scope="row">v{v.version}{" (plays)" if active and v.version == active.version else ""}</th>'
        f'<td>{e(v.status.value)}</td><td>{e(v.lang or "?")}</td><td>{when(v.created_at)}</td>'
        f'<td>{_validation(v)}</td><td class="n">{len(v.matches)}</td>'
        f'<td class="n">{num(s["stars_per_match"]) if s else "–"}</td>'
        f'<td class="n">{num(s["avg_place"]) if s else "–"}</td></tr>'
        for v, s in zip(reversed(versions), reversed(standings)))
    return f"""
<section aria-labelledby="h-versions"><h2 id="h-versions">Hosted versions</h2>
<table><thead><tr><th scope="col">Version</th><th scope="col">Build</th><th scope="col">Language</th>
<th scope="col">Uploaded</th><th scope="col">Validation match</th><th scope="col">Matches</th><th scope="col">★ per match</th>
<th scope="col">Average place</th></tr></thead><tbody>{rows}</tbody></table>
<details id="owner-view" data-bot="{e(bot)}"><summary>Owner: build logs and reasons</summary>
<form id="owner-form"><label>Bot token <input type="password" id="owner-token" autocomplete="off"></label>
<button type="submit">Show</button></form><div id="owner-output" aria-live="polite"></div></details>
<script src="/static/hosting.js" defer></script></section>"""
