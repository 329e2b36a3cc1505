"""People at the table: a person plays one seat of an ordinary match from
the web (``arena.web.play``), with the clock of ``PeopleSettings``; their
matches count on a ladder of their own per game (scope ``people``)."""

from arena.people.tables import PEOPLE, PeopleSettings, PeopleTables, PersonTable

__all__ = ["PEOPLE", "PeopleSettings", "PeopleTables", "PersonTable"]
