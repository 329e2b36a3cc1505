"""``arena verify``: recompute every deck from the revealed deal key.

For a finished tournament (or one ladder match) this checks, match by match
and deal by deal, that

* the kept key matches the commitment published at the start,
* the deck stored for the deal is the one derived from the key, the table's
  label (the match's ``seed``) and the deal's label (protocol/deals.py),
* the revealed (salt, deck) hashes to the ``commit`` stored in the match's
  event log, the one every seat received before that hand was dealt,
* the ``deal`` record of the event log holds the same deck.

It reads the store only; nothing here changes it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, Mapping

from arena.games import get_game
from arena.storage.base import MatchRecord, MatchStatus, NotFoundError, Store, TournamentStatus
from arena.storage.deal_keys import LADDER_TABLE, DealKeyring, KeyringError
from protocol.deals import KeyedDeals, commitment, key_commitment

_LABEL_SKIP = ("salt", "deck", "kind", "commitment", "at")


@dataclass
class VerifyReport:
    scope: str
    key_hex: str | None = None
    matches: int = 0
    deals: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.ok:
            return (f"{self.scope}: {self.deals} deals of {self.matches} matches derived from "
                    f"the revealed key and matching their commitments")
        return f"{self.scope}: {len(self.problems)} problem(s)\n" + "\n".join(
            f"  {p}" for p in self.problems)


def derive_deck(game: str, rules: Mapping[str, Any] | None, key: bytes, table: str,
                label: Mapping[str, Any]) -> list[str]:
    """The deck the key gives ``label`` at ``table``: a fresh engine whose
    first deal is forced to carry that label (so the game's own deck
    template and card names are used)."""
    spec = get_game(game)
    engine = spec.new_match(dict(rules) if rules else None,
                            KeyedDeals(key, table, label_of=lambda: label), None)
    engine.start()
    return list(engine.deals()[0].deck)


def _label(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in _LABEL_SKIP}


def _label_text(label: Mapping[str, Any]) -> str:
    return " ".join(f"{k} {v}" for k, v in sorted(label.items()))


def check_match(store: Store, match: MatchRecord, key: bytes, table: str,
                report: VerifyReport) -> None:
    report.matches += 1
    commits: dict[str, str] = {}
    dealt: dict[str, list[str]] = {}
    for event in store.get_events(match.id):
        data = event.data
        if data.get("kind") == "commit":
            commits[_label_text(_label(data))] = str(data.get("commitment") or "")
        elif data.get("kind") == "deal":
            dealt[_label_text(_label(data))] = list(data.get("deck", []))
    for entry in match.reveal or []:
        label = _label(entry)
        name = f"match {match.id} {_label_text(label)}"
        report.deals += 1
        deck = list(entry.get("deck", []))
        if derive_deck(match.game, match.rules, key, table, label) != deck:
            report.problems.append(f"{name}: the stored deck is not derived from the key")
        stored = commits.get(_label_text(label))
        if stored is None:
            report.problems.append(f"{name}: no commitment in the event log")
        elif commitment(str(entry.get("salt", "")), deck) != stored:
            report.problems.append(f"{name}: salt and deck do not match the commitment "
                                   "sent before the hand")
        if _label_text(label) in dealt and dealt[_label_text(label)] != deck:
            report.problems.append(f"{name}: the event log dealt another deck")
    if not match.reveal:
        report.problems.append(f"match {match.id}: finished without a reveal")


def verify_tournament(store: Store, tournament_id: str,
                      keyring: DealKeyring | None = None) -> VerifyReport:
    report = VerifyReport(scope=f"tournament {tournament_id}")
    try:
        record = store.get_tournament(tournament_id)
    except NotFoundError:
        report.problems.append(f"no tournament {tournament_id!r} in this store")
        return report
    if record.status is not TournamentStatus.FINISHED:
        report.problems.append(f"tournament {tournament_id} is {record.status.value}, not "
                               "finished: its deal key stays secret until the end")
        return report
    keyring = keyring or DealKeyring.for_store(store)
    published = (record.config.get("deals") or {}).get("commitment")
    key = keyring.load(tournament_id)
    if key is None:
        report.problems.append(f"no deal key kept for {tournament_id}{keyring.where}")
        return report
    report.key_hex = key.hex()
    if published is None:
        report.problems.append("the tournament record publishes no key commitment")
    elif key_commitment(key) != published:
        report.problems.append("the kept key does not match the commitment published at "
                               "the start")
        return report
    for slot in store.get_schedule(tournament_id):
        if slot.match_id is None:
            if not slot.extra.get("reserve"):  # reserve deck sets left unplayed are fine
                report.problems.append(f"slot {slot.slot} has no finished match")
            continue
        match = store.get_match(slot.match_id)
        if match.seed != slot.seed:
            report.problems.append(f"match {match.id} names table {match.seed!r}, "
                                   f"its slot {slot.seed!r}")
        check_match(store, match, key, slot.seed, report)
    from arena.tournament.growth import stored_problems

    report.problems += stored_problems(store, record.config, tournament_id)
    return report


def verify_match(store: Store, match_id: str,
                 keyring: DealKeyring | None = None) -> VerifyReport:
    """One match: a ladder match with its own key, or a tournament match
    (with the tournament's key, once the tournament is over)."""
    report = VerifyReport(scope=f"match {match_id}")
    try:
        match = store.get_match(match_id)
    except NotFoundError:
        report.problems.append(f"no match {match_id!r} in this store")
        return report
    if match.status is not MatchStatus.FINISHED:
        report.problems.append(f"match {match_id} is {match.status.value}: only finished "
                               "matches reveal their decks")
        return report
    keyring = keyring or DealKeyring.for_store(store)
    if match.tournament_id is not None:
        whole = verify_tournament(store, match.tournament_id, keyring)
        if whole.key_hex is None:
            report.problems.extend(whole.problems)
            return report
        key = bytes.fromhex(whole.key_hex)
        table = match.seed or ""
    else:
        try:
            found = keyring.ladder_key(match_id)
        except KeyringError as exc:
            report.problems.append(str(exc))
            return report
        if found is None:
            report.problems.append(f"no deal key kept for match {match_id} (a match dealt "
                                   "from a public --seed has none)")
            return report
        key, table = found, LADDER_TABLE
    report.key_hex = key.hex()
    check_match(store, match, key, table, report)
    return report


# -- arena verify ----------------------------------------------------------------
def add_verify_parser(sub: "argparse._SubParsersAction[Any]", add: Any) -> None:
    """``add(sub, name, **kwargs)``: the CLI's subcommand maker (shared options)."""
    p = add(
        sub, "verify", help="recompute every deck of a finished tournament from its revealed key",
        description="Checks that every deal of every match was derived from the deal key "
                    "committed at the start and matches the commitment sent before it.")
    p.add_argument("tournament", nargs="?", help="the tournament id")
    p.add_argument("--match", default=None, metavar="MATCH_ID",
                   help="check one match instead (a ladder match, or a tournament's)")
    p.add_argument("--db", default="arena.db",
                   help="the store: a SQLite file or postgresql://user@host/dbname "
                        "(default: %(default)s)")
    p.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    import sys

    from arena.storage import open_store, require_existing_store
    from arena.storage.base import StorageError

    if (args.tournament is None) == (args.match is None):
        print("arena verify: give a tournament id or --match MATCH_ID", file=sys.stderr)
        return 2
    try:
        # A store that is not there would be created empty: say so instead.
        require_existing_store(args.db, hint="check --db")
        store = open_store(args.db)
    except StorageError as exc:
        print(f"arena verify: {exc}", file=sys.stderr)
        return 2
    try:
        report = (verify_match(store, args.match) if args.match
                  else verify_tournament(store, args.tournament))
    finally:
        store.close()
    if report.key_hex:
        print(f"deal key: {report.key_hex}")
    print(report.summary(), file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 1
