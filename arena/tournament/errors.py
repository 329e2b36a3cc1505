"""The tournament layer's errors: one root, so a caller may catch them all.

::

    TournamentError                 the tournament cannot run as asked
    ├── ConfigError (ValueError)    a bad tournament file (config.py)
    ├── ScheduleError (ValueError)  no schedule fits (schedule.py)
    ├── RankingSpecError (ValueError)  a bad ranking spec (ranking.py)
    ├── MixedGamesError (ValueError)   standings over several games (standings.py)
    └── TournamentCommandError      a bad ``arena tournament`` command line (command.py)

Errors of the layers below keep their own roots (``StorageError``,
``GameError``) and pass through unchanged.
"""

from __future__ import annotations


class TournamentError(Exception):
    """The tournament cannot run as asked (unknown id, lost deal key, bad config...)."""
