"""The request the baselines send: a play decision mid-hand, as the arena
sends it. Plain data, no imports: the bare server's process loads nothing
of the arena (its memory and start-up are the baseline)."""

SAMPLE_REQUEST = {
    "type": "request", "match": "20261129-000000-abcdef", "id": 1, "phase": "play",
    "deadline_ms": 1000, "legal": ["8H", "KH"],
    "state": {"round": 0, "hand": 3, "dealer": 2, "seat": 4, "trump": "S", "face_up": "9S",
              "cards": ["8H", "KH", "7S", "QD"], "scores": [12, 14, 9, 15, 11],
              "stars": [0, 0, 0, 0, 0], "status": ["entered"] * 5, "stock": 0,
              "face_up_taken": False, "trick": [[3, "TH"]], "leader": 3,
              "tricks": [0, 0, 1, 0, 0], "played": [{"leader": 3, "cards": [[3, "AC"], [4, "7C"],
                                                     [0, "8C"], [1, "9C"], [2, "TC"]], "winner": 3}]},
}
