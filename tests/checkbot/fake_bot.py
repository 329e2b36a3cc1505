"""A tiny JSON Lines bot whose behaviour is chosen by argv[1].

good        plays by the protocol (the first legal answer, reconnects once)
silent      connects and never says hello
illegal     answers every request with something that is never legal
late        answers every request just after its deadline
noreconnect plays well but exits when the connection drops
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
    send(sock, {"type": "hello", "protocol": 1, "token": os.environ["ARENA_TOKEN"], "name": os.environ["ARENA_NAME"]})
    pending: dict = {}
    for raw in lines:
        message = json.loads(raw)
        kind = message["type"]
        if kind == "bye":
            return "bye"
        if kind == "request":
            pending[message["id"]] = message
            if MODE == "late":
                time.sleep(message["deadline_ms"] / 1000 + 0.05)
            send(sock, {"type": "action", "match": message["match"], "id": message["id"], "action": answer(message)})
        elif kind == "error" and message.get("code") == "illegal_action" and MODE != "illegal":
            request = pending.get(message.get("id"))
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
