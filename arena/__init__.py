"""Muushig Arena: bots in any language play card games over TCP.

The packages form layers; each imports only from its own layer and the ones
below (``tests/test_architecture.py`` checks it, and that no import circle
and no module over 500 lines creeps in):

0. ``protocol`` (wire, codec, SDK), :mod:`arena.games` (the rules, pure),
   :mod:`arena.auth`, :mod:`arena.logs`, :mod:`arena.metrics`,
   :mod:`arena.records` (events as stored text), :mod:`arena.pure` (whether
   the compiled per-decision modules or their sources run);
1. :mod:`arena.storage` (stores, the writer thread, deal keys on disk) and
   :mod:`arena.live` (the live hub spectators subscribe to);
2. :mod:`arena.server` (bot connections, lobby, tables, match sessions);
3. :mod:`arena.tournament` and :mod:`arena.hosting`, which play matches on
   the server through :class:`arena.tournament.host.MatchHost`;
4. :mod:`arena.web` (HTTP), :mod:`arena.app` (composes server, web app,
   tournament director and hosted bots), :mod:`arena.cli` (the commands;
   ``arena tournament`` gets the application from it), :mod:`arena.checkbot`.

Every layer has one root error: ``protocol.errors.ProtocolError``,
``arena.games.base.GameError``, ``arena.storage.base.StorageError``,
``arena.server.errors.ServerError``, ``arena.tournament.errors.TournamentError``,
``arena.hosting.errors.HostingError``; the web answers with
``arena.web.errors.ApiError``. Each package's docstring draws its tree.
"""

# First: with ARENA_PURE_PYTHON=1 the compiled modules are imported as source.
import arena.pure  # noqa: E402,F401
