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
"""

from __future__ import annotations

from arena.storage.connections import Database


class OpenNameTable:
    """The open-name methods of :class:`arena.storage.store.SqlStore`."""

    db: Database

    def open_name_owner(self, name: str, epoch: str) -> str | None:
        """The token hash holding ``name`` in ``epoch``, or None."""
        with self.db.read() as db:
            row = db.execute("SELECT token_hash FROM open_names WHERE name = ? AND epoch = ?",
                             (name, epoch)).fetchone()
        return None if row is None else str(row[0])

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
