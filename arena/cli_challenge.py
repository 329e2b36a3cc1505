"""``arena challenge``: ask a running arena for unrated matches, or show one.

It speaks the server's HTTP API (``POST /api/challenges``,
``GET /api/challenges/{id}``), so it works against any arena on the network
with the bot's own token, like the bot itself.
"""

from __future__ import annotations

import argparse
import json
import os
import urllib.error
import urllib.request
from typing import Any

from arena.cli_errors import CommandFailed, UserError
from arena.cli_options import add_command

TOKEN_ENV = "ARENA_BOT_TOKEN"


def add_challenge_parser(sub: Any) -> None:
    p = add_command(sub, "challenge", help="ask for unrated matches against chosen bots",
                    description="Ask a running arena for unrated matches of your bot against "
                                "named opponents (empty seats: house bots), or show a "
                                "challenge with --show ID. The matches count on no ladder.")
    p.add_argument("opponents", nargs="*", metavar="OPPONENT", help="bots to play against")
    p.add_argument("--server", default="http://127.0.0.1:8080",
                   help="the arena's web address (default: http://127.0.0.1:8080)")
    p.add_argument("--token", default=None,
                   help=f"your bot's token (default: ${TOKEN_ENV}; visible in ps: prefer the "
                        "variable)")
    p.add_argument("-n", "--matches", type=int, default=1, help="how many matches (default 1)")
    p.add_argument("--game", default=None, help="the game (default: the server's)")
    p.add_argument("--house-bot", default=None, help="house bot for empty seats")
    p.add_argument("--show", default=None, metavar="ID", help="show this challenge instead")
    p.set_defaults(func=run_challenge_command)


def _call(url: str, *, body: dict[str, Any] | None = None,
          token: str | None = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, headers=headers,
                                 method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return dict(json.load(response))
    except urllib.error.HTTPError as exc:
        try:
            message = json.load(exc)["error"]["message"]
        except Exception:
            message = exc.reason
        retry = exc.headers.get("Retry-After")
        later = f" (retry after {retry} s)" if retry and exc.code == 429 else ""
        raise CommandFailed(f"the server refused ({exc.code}): {message}{later}") from None
    except urllib.error.URLError as exc:
        raise CommandFailed(f"cannot reach {url}: {exc.reason}") from None


def format_challenge(detail: dict[str, Any]) -> str:
    c = detail["challenge"]
    lines = [f"challenge {c['id']} by {c['challenger']} ({c['game']}) against "
             f"{', '.join(c['opponents'])}: {c['state']}, {c['played']} of {c['matches']} "
             f"played, {c['waiting']} waiting, {c['given_up']} given up"]
    for row in detail.get("results") or []:
        lo, hi = row.get("points_ci_low"), row.get("points_ci_high")
        interval = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else ""
        lines.append(f"  {row['rank']:>3}. {row['bot']:<24} {row['matches']:>4} matches  "
                     f"{row['points']:.2f}{interval}")
    return "\n".join(lines)


def run_challenge_command(args: argparse.Namespace) -> int:
    server = args.server.rstrip("/")
    if args.show is not None:
        print(format_challenge(_call(f"{server}/api/challenges/{args.show}")))
        return 0
    token = args.token or os.environ.get(TOKEN_ENV)
    if not token:
        raise UserError(f"give your bot's token: --token TOKEN or ${TOKEN_ENV}")
    if not args.opponents:
        raise UserError("name at least one OPPONENT")
    body: dict[str, Any] = {"opponents": args.opponents, "matches": args.matches}
    if args.game is not None:
        body["game"] = args.game
    if args.house_bot is not None:
        body["house_bot"] = args.house_bot
    c = _call(f"{server}/api/challenges", body=body, token=token)["challenge"]
    print(f"challenge {c['id']}: {c['matches']} matches against {', '.join(c['opponents'])}, "
          f"{c['state']}; follow it at {server}{c['url']}")
    return 0
