"""Open mode's names across the processes of one server.

In open mode (``arena serve --any-token``) a bot name belongs to the first
token that says hello with it, until the server restarts. Under ``arena
serve --workers N`` the parent and every worker admit bots, each with its
own memory, and the parent keeps some bots (tournament entrants, bots that
opted in to people or the hosted ladder) whatever their name: so the first
token's hold is recorded here, with the server's *epoch* (one value per
start of a server, shared by its parent and workers). A claim in the same
epoch by another token finds the name taken; a claim in another epoch (the
server restarted) takes the name over. Only a hash of the token is stored.

A bot the arena starts itself (a hosted bot's run, a tournament's local
entrant) has a token valid in the process that started it only; its name
is recorded here with :data:`STARTED_BY_ARENA` as its holder, which no
token hashes to, so no remote hello takes it in any process for the rest
of the epoch, also between the bot's runs.
"""

from __future__ import annotations

from typing import Final

from arena.storage.connections import Database

# The holder of a name the arena gave one of its own bots: never a token's
# hash (those are hex digits).
STARTED_BY_ARENA: Final = "started-by-the-arena"


class OpenNameTable:
    """The open-name methods of :class:`arena.storage.store.SqlStore`."""

    db: Database

    def open_name_owner(self, name: str, epoch: str) -> str | None:
        """The token hash holding ``name`` in ``epoch``, or None."""
        with self.db.read() as db:
            row = db.execute("SELECT token_hash FROM open_names WHERE name = ? AND epoch = ?",
                             (name, epoch)).fetchone()
        return None if row is None else str(row[0])

    def reserve_started_name(self, name: str, epoch: str) -> None:
        """``name`` is a bot's the arena starts itself: held for the arena
        in ``epoch``, whoever held it before (in one process the arena's
        own bot already takes the name over from a remote token)."""
        with self.db.tx() as db:
            db.execute("INSERT INTO open_names (name, token_hash, epoch) VALUES (?, ?, ?)"
                       " ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash,"
                       " epoch = excluded.epoch", (name, STARTED_BY_ARENA, epoch))

    def claim_open_name(self, name: str, token_hash: str, epoch: str) -> str:
        """Give ``name`` to ``token_hash`` unless another token holds it in
        ``epoch``; returns the holder's token hash (this one if claimed).
        One statement decides a race between two processes."""
        with self.db.tx() as db:
            db.execute("INSERT INTO open_names (name, token_hash, epoch) VALUES (?, ?, ?)"
                       " ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash,"
                       " epoch = excluded.epoch WHERE open_names.epoch <> excluded.epoch",
                       (name, token_hash, epoch))
            row = db.execute("SELECT token_hash FROM open_names WHERE name = ?",
                             (name,)).fetchone()
        return str(row[0])
