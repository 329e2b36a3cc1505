"""A tiny JSON Lines bot whose behaviour is chosen by argv[1].

good        plays by the protocol (the first legal answer, reconnects once)
silent      connects and never says hello
illegal     answers every request with something that is never legal
late        answers every request just after its deadline
noreconnect plays well but exits when the connection drops
idonly      plays well but keys requests by id alone (ignores an error's match)
oneshot     plays well but leaves after its first match_end, unasked
waitbye     declares hello.max_matches and waits for the server's bye after them
early       declares hello.max_matches but leaves after its first match
nomax       ignores ARENA_MAX_MATCHES (no max_matches in its hello)
strict      plays well but says bye to any message type it does not know (a reveal)

With ARENA_MAX_MATCHES set, the bot announces it in its hello and says bye
after that many match_end messages (except in modes waitbye, early, nomax).
"""

import json
import os
import socket
import sys
import time

MODE = sys.argv[1]


def connect() -> tuple[socket.socket, object]:
    sock = socket.create_connection((os.environ["ARENA_HOST"], int(os.environ["ARENA_PORT"])))
    return sock, sock.makefile("rb")


def send(sock: socket.socket, message: dict) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def answer(request: dict):
    legal = request["legal"]
    if MODE == "illegal":
        return "certainly-not-legal"
    return legal[0]


def session(sock: socket.socket, lines) -> str:
    """Play until the connection ends; returns 'bye' or 'dropped'."""
    if MODE == "silent":
        time.sleep(30)
        return "bye"
    hello = {"type": "hello", "protocol": 1, "token": os.environ["ARENA_TOKEN"], "name": os.environ["ARENA_NAME"]}
    max_matches = int(os.environ["ARENA_MAX_MATCHES"]) if os.environ.get("ARENA_MAX_MATCHES") else None
    if MODE == "nomax":
        max_matches = None
    if max_matches is not None:
        hello["max_matches"] = max_matches
    send(sock, hello)
    pending: dict = {}
    ended = 0
    for raw in lines:
        message = json.loads(raw)
        kind = message["type"]
        if kind == "bye":
            return "bye"
        if MODE == "strict" and kind not in ("welcome", "match_start", "event", "request", "error", "match_end"):
            send(sock, {"type": "bye"})
            return "bye"
        if kind == "match_end":
            ended += 1
            if (MODE == "oneshot" and message["match"] == "check-a") or (max_matches is not None and ended >= (1 if MODE == "early" else max_matches) and MODE != "waitbye"):
                send(sock, {"type": "bye"})
                return "bye"
        if kind == "request":
            if MODE == "idonly":
                pending.setdefault(message["id"], message)
            else:
                pending[(message["match"], message["id"])] = message
            if MODE == "late":
                time.sleep(message["deadline_ms"] / 1000 + 0.05)
            send(sock, {"type": "action", "match": message["match"], "id": message["id"], "action": answer(message)})
        elif kind == "error" and message.get("code") == "illegal_action" and MODE != "illegal":
            key = message.get("id") if MODE == "idonly" else (message.get("match"), message.get("id"))
            request = pending.get(key)
            if request is not None:
                send(sock, {"type": "action", "match": request["match"], "id": request["id"],
                            "action": request["legal"][-1]})
    return "dropped"


sock, lines = connect()
outcome = session(sock, lines)
if outcome == "dropped" and MODE != "noreconnect":
    sock, lines = connect()
    session(sock, lines)
sys.exit(0)
