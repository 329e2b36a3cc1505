"""Tournaments: files, schedules, playing them, standings and their proof.

* :mod:`.config` -- tournament files (TOML) as frozen dataclasses;
* :mod:`.schedule`, :mod:`.plan` -- who plays whom with which decks (pure);
* :mod:`.host` -- :class:`~.host.MatchHost`, all the tournament code needs of
  a server: play a match, reserve entrants' names, publish progress;
* :mod:`.runner` -- plays a schedule on a host, resumably; :mod:`.shared` --
  as one node of a shared slot queue; :mod:`.director` plays the
  tournaments created over HTTP inside ``arena serve``;
* :mod:`.on_workers`, :mod:`.worker` -- ``arena tournament --workers N``:
  the parent and its worker processes, each a node of the queue;
  :mod:`.outcome` -- what the command reports at the end;
* :mod:`.extension`, :mod:`.separation` -- reserve deck sets until the
  standings separate;
* :mod:`.ranking`, :mod:`.standings` -- who leads (pure); :mod:`.export` files;
* :mod:`.progress` -- the terminal display; :mod:`.verify`, :mod:`.botlogs`
  -- ``arena verify`` and ``arena logs``.

It sits above the server and below the web and the CLI; :mod:`.command`
(``arena tournament``) is given the application to run on by the CLI
(``arena.app.Arena``), so nothing here imports what is above.

Errors (:mod:`.errors`)::

    TournamentError
    ├── ConfigError (ValueError)       a bad tournament file
    ├── ScheduleError (ValueError)     no schedule fits
    ├── RankingSpecError (ValueError)  a bad ranking description
    ├── MixedGamesError (ValueError)   standings over several games
    └── TournamentCommandError         a bad ``arena tournament`` command line
"""
