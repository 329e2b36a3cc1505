"""The lines of each game (docs/notation.md has the grammar and examples).

Each template is one kind of the engine's ``for_record()`` events. A line
shows the fields a reader needs; fields it leaves out (an exchange's count,
the showdown's copy of the rows already given by the ``arranged`` lines)
follow from the others, and a replay recomputes every event in full anyway.
"""

from __future__ import annotations

from arena.notation.lines import GameNotation, LineTemplate as T

MUUSHIG = GameNotation("muushig", (
    T("round_start", "round {round:int} dealer {dealer:int} scores {scores:ints}"),
    T("deal", "deal round {round:int} hand {hand:int} deck {deck:cards}"),
    T("hand_start", "hand {round:int} {hand:int} dealer {dealer:int} up {face_up:card} "
                    "trump {trump:word} hands {hands:cardlists}"),
    T("decision", "decide {seat:int} {choice:word} {forced:flag}"),
    T("all_folded", "all_folded dealer {dealer:int} scores {scores:ints}"),
    T("exchange", "exchange {seat:int} discards {discarded:cards} draws {drawn:cards}"),
    T("take", "take {seat:int} discards {discarded:optcard}"),
    T("play", "play {seat:int} {card:card}"),
    T("trick", "trick {cards:seatcards} winner {winner:int} scores {scores:ints}"),
    T("hand_end", "hand_end tricks {tricks:ints} muushig {muushig:ints} scores {scores:ints}"),
    T("round_end", "round_end {round:int} winner {winner:int} scores {scores:ints}"),
))

THIRTEEN = GameNotation("thirteen", (
    T("deal", "deal {deal:int} deck {deck:cards}"),
    T("deal_start", "hands {deal:int} {hands:cardlists}"),
    T("arranged", "arranged {deal:int} seat {seat:int} front {front:cards} "
                  "middle {middle:cards} back {back:cards}"),
    T("showdown", "showdown {deal:int} fouled {fouled:bools} pairs {pairs:intlists} "
                  "scores {scores:ints} totals {totals:ints}"),
))

NOTATIONS = {n.game: n for n in (MUUSHIG, THIRTEEN)}
