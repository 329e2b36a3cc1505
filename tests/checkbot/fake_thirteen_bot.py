"""A tiny JSON Lines thirteen-card bot whose behaviour is chosen by argv[1].

good      a valid, never-fouled arrangement (the house strategy)
retry     as good, and answers again after illegal_action
twelve    a front of two cards (12 in all)
foreign   a card that is not in its hand
twice     one card in two rows
silent    never answers a request
foul      a fouled arrangement in every deal
foulpen   a fouled arrangement only under foul_policy = penalize
nogame    as good, but its hello does not say which game it plays

Reconnects once when the connection drops; says bye after
ARENA_MAX_MATCHES match_end messages when that is set.
"""

import json
import os
import random
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from itertools import combinations  # noqa: E402

from arena.games.thirteen.evaluator import hand_strength  # noqa: E402
from arena.games.thirteen.cards import CARD_INDEX, CARD_STR, card_strs  # noqa: E402
from arena.games.thirteen.wire import check_arrangement, seat_hands  # noqa: E402

MODE = sys.argv[1]
RULES: dict = {}


def send(sock: socket.socket, message: dict) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def fouled_split(hand: tuple[int, ...], wheel: str) -> dict:
    rng = random.Random(7)
    for _ in range(10000):
        cards = list(hand)
        rng.shuffle(cards)
        action = {"front": card_strs(cards[:3]), "middle": card_strs(cards[3:8]), "back": card_strs(cards[8:])}
        if seat_hands(check_arrangement(action, hand, wheel, reject_fouls=False), wheel).fouled:
            return action
    raise RuntimeError("no fouled split found")


def greedy(hand: tuple[int, ...], wheel: str) -> dict:
    """Never fouled and quick (a few ms, so short deadlines hold even on a
    busy machine): the best five as the back, the best five of the eight
    left as the middle, the last three in front."""
    back = max(combinations(hand, 5), key=lambda five: hand_strength(five, wheel))
    rest = [c for c in hand if c not in back]
    middle = max(combinations(rest, 5), key=lambda five: hand_strength(five, wheel))
    front = [c for c in rest if c not in middle]
    return {"front": card_strs(front), "middle": card_strs(middle), "back": card_strs(back)}


def arrange(request: dict) -> dict:
    rules = RULES.get(request["match"], {})
    wheel = rules.get("wheel", "lowest")
    cards = request["state"]["cards"]
    hand = tuple(CARD_INDEX[c] for c in cards)
    if MODE == "foul" or (MODE == "foulpen" and rules.get("foul_policy") == "penalize"):
        return fouled_split(hand, wheel)
    action = greedy(hand, wheel)
    if MODE == "twelve":
        action["front"] = action["front"][:2]
    elif MODE == "foreign":
        stranger = next(c for c in CARD_STR if c not in cards)
        action["back"] = [*action["back"][:4], stranger]
    elif MODE == "twice":
        action["back"] = [*action["back"][:4], action["front"][0]]
    return action


def session(sock: socket.socket, lines) -> str:
    """Play until the connection ends; returns 'bye' or 'dropped'."""
    hello = {"type": "hello", "protocol": 1, "token": os.environ["ARENA_TOKEN"], "name": os.environ["ARENA_NAME"]}
    if MODE != "nogame":
        hello["game"] = "thirteen"
    max_matches = int(os.environ["ARENA_MAX_MATCHES"]) if os.environ.get("ARENA_MAX_MATCHES") else None
    if max_matches is not None:
        hello["max_matches"] = max_matches
    send(sock, hello)
    answered: dict = {}
    ended = 0
    for raw in lines:
        message = json.loads(raw)
        kind = message["type"]
        if kind == "bye":
            return "bye"
        if kind == "match_start":
            RULES[message["match"]] = message["rules"]
        if kind == "match_end":
            ended += 1
            if max_matches is not None and ended >= max_matches:
                send(sock, {"type": "bye"})
                return "bye"
        if kind == "request" and MODE != "silent":
            action = arrange(message)
            answered[(message["match"], message["id"])] = action
            send(sock, {"type": "action", "match": message["match"], "id": message["id"], "action": action})
        elif kind == "error" and message.get("code") == "illegal_action" and MODE == "retry":
            key = (message.get("match"), message.get("id"))
            if key in answered:
                send(sock, {"type": "action", "match": key[0], "id": key[1], "action": answered[key]})
    return "dropped"


def connect() -> tuple[socket.socket, object]:
    sock = socket.create_connection((os.environ["ARENA_HOST"], int(os.environ["ARENA_PORT"])))
    return sock, sock.makefile("rb")


sock, lines = connect()
if session(sock, lines) == "dropped":
    sock, lines = connect()
    session(sock, lines)
sys.exit(0)
