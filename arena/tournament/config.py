"""Tournament files: TOML in, frozen dataclasses out, errors that name the key.

Example::

    name = "Spring cup"
    game = "muushig"        # default
    seed = 7                # a public label naming the tables (decks come from a secret key)
    duplicate = true        # default: replay each table's decks, seats rotated
    parallel = 2            # tables at once (default 1)

    [limits]
    decision_ms = 1000
    bank_ms = 5000

    [rules]                 # passed to the game as match_start.rules
    last_two_forced = true

    [schedule]
    kind = "auto"           # auto | round_robin | balanced | swiss | gauntlet
    max_tables = 252        # auto: round robin when C(N, seats) <= max_tables
    tables = 40             # balanced: distinct tables before duplication
    house_bot = "heuristic" # fills empty seats when entrants < seats
    rounds = 7              # swiss: rounds, each paired from the standings
    challenger = "alpha"    # gauntlet: the entrant against the rest (the field)
    max_sets = 200          # gauntlet: the cap, in deck sets
    alpha = 0.05            # gauntlet: the stopping rule's error rate
    effect = 0.15           # gauntlet: the share of won deck sets over 1/2 worth finding

    [[entrant]]
    name = "alpha"
    command = ["./bots/alpha", "--fast"]   # started by the arena
    cwd = "bots"                           # optional

    [[entrant]]
    name = "beta"
    remote = true           # a registered bot that connects by itself

A local bot's ``cwd`` defaults to the config file's folder, and a relative
``cwd`` or program path (``command[0]`` containing a ``/``) is resolved
against that folder, so a tournament file works from wherever it is run.
"""

from __future__ import annotations

import random
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from arena.games import game_names, get_game
from arena.games.base import RuleConfigError
from arena.tournament.errors import TournamentError
from arena.tournament.schedule import ScheduleKind
from protocol.names import BOT_NAME_RULE, bot_name_problem

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
DEFAULT_MAX_TABLES = 252  # C(10, 5): round robin up to ten entrants
MAX_PARALLEL = 64
MAX_ENTRANTS = 1000

# Every key a tournament file may hold, per table (docs/tournaments.md
# documents each; a test checks that the two agree).
TOP_KEYS = frozenset({"name", "game", "seed", "duplicate", "parallel", "limits", "rules",
                      "schedule", "entrant"})
LIMITS_KEYS = frozenset({"decision_ms", "bank_ms"})
SCHEDULE_KEYS = frozenset({"kind", "max_tables", "tables", "house_bot", "until_separated",
                           "max_extra_matches", "rounds", "challenger", "max_sets",
                           "alpha", "effect"})
# The keys only a gauntlet has (arena/tournament/gauntlet_play.py).
GAUNTLET_KEYS = ("challenger", "max_sets", "alpha", "effect")
MAX_ROUNDS = 1000
DEFAULT_MAX_EXTRA_MATCHES = 100
ENTRANT_KEYS = frozenset({"name", "command", "cwd", "remote", "hosted", "version"})


class ConfigError(TournamentError, ValueError):
    """The tournament file is invalid; the message starts with the key."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


@dataclass(frozen=True)
class TournamentLimits:
    """The ``[limits]`` table of a tournament file."""

    decision_ms: int = 1000
    bank_ms: int = 0

    def to_wire(self) -> dict[str, int]:
        return {"decision_ms": self.decision_ms, "bank_ms": self.bank_ms}


@dataclass(frozen=True)
class ScheduleConfig:
    kind: ScheduleKind = ScheduleKind.AUTO
    max_tables: int = DEFAULT_MAX_TABLES
    tables: int | None = None  # balanced: None lets the scheduler choose
    house_bot: str | None = None  # None: the game's default house bot
    # Stopping rule (arena/tournament/extension.py): after the schedule, play
    # more deck sets until neighbours are separated, at most this many matches.
    until_separated: bool = False
    max_extra_matches: int = DEFAULT_MAX_EXTRA_MATCHES
    rounds: int | None = None  # swiss: how many rounds (required there, refused elsewhere)
    # gauntlet: the challenger (an entrant) and its stopping rule; None elsewhere.
    challenger: str | None = None
    max_sets: int | None = None
    alpha: float | None = None
    effect: float | None = None


@dataclass(frozen=True)
class Entrant:
    name: str
    command: tuple[str, ...] | None = None  # local bot started by the arena
    cwd: Path | None = None
    remote: bool = False
    # A hosted bot's version (arena/tournament/hosted_entrant.py): ``name`` is
    # its seat, ``bot`` + ".v" + version, so two versions may sit together.
    bot: str | None = None
    version: int | None = None

    @property
    def hosted(self) -> bool:
        return self.version is not None

    @property
    def local(self) -> bool:
        return self.command is not None


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    entrants: tuple[Entrant, ...]
    game: str = "muushig"
    seed: int = 0
    duplicate: bool = True
    parallel: int = 1
    limits: TournamentLimits = field(default_factory=TournamentLimits)
    rules: dict[str, Any] = field(default_factory=dict)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    source: Path | None = None  # the file it was read from

    @property
    def entrant_names(self) -> list[str]:
        return [e.name for e in self.entrants]

    def to_wire(self) -> dict[str, Any]:
        """Plain JSON-able dict (stored with the tournament record)."""
        wire: dict[str, Any] = {
            "name": self.name, "game": self.game, "seed": self.seed,
            "duplicate": self.duplicate, "parallel": self.parallel,
            "limits": self.limits.to_wire(), "rules": dict(self.rules),
            "schedule": {"kind": self.schedule.kind.value,
                         "max_tables": self.schedule.max_tables,
                         "tables": self.schedule.tables,
                         "house_bot": self.schedule.house_bot},
            "entrants": [{"name": e.name, "hosted": True, "bot": e.bot, "version": e.version}
                         if e.hosted else
                         {"name": e.name,
                          "command": None if e.command is None else list(e.command),
                          "cwd": None if e.cwd is None else str(e.cwd),
                          "remote": e.remote} for e in self.entrants],
        }
        if self.schedule.until_separated:  # only then: older tournament ids stay the same
            wire["schedule"].update(until_separated=True,
                                    max_extra_matches=self.schedule.max_extra_matches)
        if self.schedule.kind is ScheduleKind.SWISS:  # likewise: only Swiss files carry it
            wire["schedule"]["rounds"] = self.schedule.rounds
        if self.schedule.kind is ScheduleKind.GAUNTLET:
            wire["schedule"].update({key: getattr(self.schedule, key) for key in GAUNTLET_KEYS})
        return wire


# -- small typed getters: each error names the key ----------------------------

def _check_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(f"{where}{key}", "unknown key; expected one of "
                              + ", ".join(sorted(allowed)))


@overload
def _int(table: dict[str, Any], key: str, where: str, default: int, *,
         minimum: int | None = None, maximum: int | None = None) -> int: ...
@overload
def _int(table: dict[str, Any], key: str, where: str, default: None, *,
         minimum: int | None = None, maximum: int | None = None) -> int | None: ...
def _int(table: dict[str, Any], key: str, where: str, default: int | None, *,
         minimum: int | None = None, maximum: int | None = None) -> int | None:
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(where + key, f"must be an integer, not {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(where + key, f"must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise ConfigError(where + key, f"must be at most {maximum}, not {value}")
    return value


def _bool(table: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(where + key, f"must be true or false, not {value!r}")
    return value


def _str(table: dict[str, Any], key: str, where: str, default: str | None) -> str | None:
    value = table.get(key, default)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(where + key, f"must be a non-empty string, not {value!r}")
    return value


def _float(table: dict[str, Any], key: str, where: str, default: float, *,
           above: float, below: float) -> float:
    """A number strictly between ``above`` and ``below``."""
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(where + key, f"must be a number, not {value!r}")
    if not above < value < below:
        raise ConfigError(where + key, f"must be between {above} and {below} (both "
                          f"excluded), not {value}")
    return float(value)


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(key, "must be a table ([" + key + "])")
    return value


def _entrant(raw: Any, index: int, base_dir: Path) -> Entrant:
    where = f"entrant[{index}]."
    if not isinstance(raw, dict):
        raise ConfigError(f"entrant[{index}]", "must be a table ([[entrant]])")
    _check_keys(raw, set(ENTRANT_KEYS), where)
    name = _str(raw, "name", where, None)
    if name is None:
        raise ConfigError(where + "name", "is required")
    if not NAME_RE.match(name):
        raise ConfigError(where + "name", f"{name!r} must be {BOT_NAME_RULE}, starting with a "
                          "letter or digit")
    problem = bot_name_problem(name)  # the bot port's rule: an entrant is a bot
    if problem is not None:
        raise ConfigError(where + "name", problem)
    if "hosted" in raw or "version" in raw:
        return _hosted_entrant(raw, where, name, _int(raw, "version", where, None, minimum=1))
    remote = _bool(raw, "remote", where, False)
    command = raw.get("command")
    if remote and command is not None:
        raise ConfigError(where + "command", "a remote entrant connects by itself; give "
                          "either command or remote = true, not both")
    if not remote and command is None:
        raise ConfigError(where + "command", f"entrant {name!r} needs command = [...] "
                          "(a bot the arena starts), remote = true, or hosted = true with "
                          "version = N")
    if remote:
        if "cwd" in raw:
            raise ConfigError(where + "cwd", "only a local entrant (command) has a cwd")
        return Entrant(name=name, remote=True)
    if (not isinstance(command, list) or not command
            or not all(isinstance(a, str) and a for a in command)):
        raise ConfigError(where + "command", "must be a non-empty list of non-empty strings, "
                          f"not {command!r}")
    program = command[0]
    if "/" in program and not Path(program).is_absolute():
        program = str((base_dir / program).resolve())
    cwd_text = _str(raw, "cwd", where, None)
    cwd = base_dir if cwd_text is None else (base_dir / cwd_text).resolve()
    return Entrant(name=name, command=(program, *command[1:]), cwd=cwd)


def _hosted_entrant(raw: dict[str, Any], where: str, bot: str, version: int | None) -> Entrant:
    """``{name = "mybot", hosted = true, version = 7}``: that stored version,
    seated as ``mybot.v7`` (the name its results and the schedule use)."""
    if raw.get("hosted") is not True:
        raise ConfigError(where + "hosted", "version = N names a hosted bot's version: "
                          "give hosted = true with it")
    if version is None:
        raise ConfigError(where + "version", f"hosted entrant {bot!r} needs version = N "
                          "(the stored version that plays: 'arena bots versions' lists them)")
    for key in ("command", "cwd", "remote"):
        if key in raw:
            raise ConfigError(where + key, "a hosted entrant is started by the arena from "
                              "its stored version; it has no " + key)
    seat = f"{bot}.v{version}"
    if bot_name_problem(seat) is not None:
        raise ConfigError(where + "name", f"{bot!r} with version {version} sits as {seat!r}, "
                          f"which is not a bot name ({BOT_NAME_RULE}): shorter bot names only")
    return Entrant(name=seat, bot=bot, version=version)


def parse_config(doc: dict[str, Any], *, base_dir: Path | str = ".",
                 source: Path | None = None) -> TournamentConfig:
    """Validate a parsed TOML document (see module doc)."""
    base = Path(base_dir).resolve()
    _check_keys(doc, set(TOP_KEYS), "")
    name = _str(doc, "name", "", None)
    if name is None:
        raise ConfigError("name", "is required")
    game = _str(doc, "game", "", "muushig")
    assert game is not None
    if game not in game_names():
        raise ConfigError("game", f"unknown game {game!r}; known: {', '.join(game_names())}")

    limits_raw = _table(doc, "limits")
    _check_keys(limits_raw, set(LIMITS_KEYS), "limits.")
    limits = TournamentLimits(
        decision_ms=_int(limits_raw, "decision_ms", "limits.", TournamentLimits.decision_ms,
                         minimum=1, maximum=600_000),
        bank_ms=_int(limits_raw, "bank_ms", "limits.", TournamentLimits.bank_ms,
                     minimum=0, maximum=3_600_000))

    sched_raw = _table(doc, "schedule")
    _check_keys(sched_raw, set(SCHEDULE_KEYS), "schedule.")
    kind_text = _str(sched_raw, "kind", "schedule.", ScheduleKind.AUTO.value)
    try:
        kind = ScheduleKind(kind_text)
    except ValueError:
        raise ConfigError("schedule.kind", f"{kind_text!r} is not one of "
                          + ", ".join(k.value for k in ScheduleKind)) from None
    schedule = ScheduleConfig(
        kind=kind,
        max_tables=_int(sched_raw, "max_tables", "schedule.", DEFAULT_MAX_TABLES,
                        minimum=1, maximum=100_000),
        tables=_int(sched_raw, "tables", "schedule.", None, minimum=1, maximum=100_000),
        house_bot=_str(sched_raw, "house_bot", "schedule.", None),
        until_separated=_bool(sched_raw, "until_separated", "schedule.", False),
        max_extra_matches=_int(sched_raw, "max_extra_matches", "schedule.",
                               DEFAULT_MAX_EXTRA_MATCHES, minimum=0, maximum=100_000),
        rounds=_int(sched_raw, "rounds", "schedule.", None, minimum=1, maximum=MAX_ROUNDS))
    schedule = _gauntlet_schedule(schedule, sched_raw)
    _check_swiss(schedule)
    house_bots = get_game(game).house_bots
    if schedule.house_bot is not None and schedule.house_bot not in house_bots:
        raise ConfigError("schedule.house_bot", f"unknown house bot {schedule.house_bot!r}; "
                          f"{game} has {', '.join(sorted(house_bots))}")

    entrants_raw = doc.get("entrant", [])
    if not isinstance(entrants_raw, list) or not entrants_raw:
        raise ConfigError("entrant", "at least one [[entrant]] is required")
    if len(entrants_raw) > MAX_ENTRANTS:
        raise ConfigError("entrant", f"at most {MAX_ENTRANTS} entrants")
    entrants = tuple(_entrant(raw, i, base) for i, raw in enumerate(entrants_raw))
    seen: set[str] = set()
    for i, entrant in enumerate(entrants):
        if entrant.name in seen:
            raise ConfigError(f"entrant[{i}].name", f"{entrant.name!r} is used twice; "
                              "entrant names must be unique")
        seen.add(entrant.name)

    if schedule.challenger is not None and schedule.challenger not in seen:
        raise ConfigError("schedule.challenger", f"{schedule.challenger!r} is not an entrant; "
                          "the challenger must be one of the [[entrant]] names")
    if schedule.challenger is not None and len(entrants) < 2:
        raise ConfigError("entrant", "a gauntlet needs the challenger and at least one more "
                          "entrant (its field)")
    rules = _table(doc, "rules")
    _check_rules(game, rules)
    return TournamentConfig(
        name=name, game=game, entrants=entrants,
        seed=_int(doc, "seed", "", 0, minimum=0, maximum=2**63 - 1),
        duplicate=_bool(doc, "duplicate", "", True),
        parallel=_int(doc, "parallel", "", 1, minimum=1, maximum=MAX_PARALLEL),
        limits=limits, rules=dict(rules), schedule=schedule, source=source)


def _check_swiss(schedule: ScheduleConfig) -> None:
    """``rounds`` belongs to Swiss and Swiss needs it; Swiss plays a fixed
    number of rounds, so the reserve of ``until_separated`` has no place."""
    swiss = schedule.kind is ScheduleKind.SWISS
    if swiss and schedule.rounds is None:
        raise ConfigError("schedule.rounds", 'kind = "swiss" needs rounds = N (how many '
                          "rounds to pair and play)")
    if not swiss and schedule.rounds is not None:
        raise ConfigError("schedule.rounds", 'only kind = "swiss" plays rounds; remove '
                          "rounds or set kind = \"swiss\"")
    if swiss and schedule.until_separated:
        raise ConfigError("schedule.until_separated", "a Swiss tournament plays its fixed "
                          "number of rounds; use more rounds instead of until_separated")
    if swiss and schedule.tables is not None:
        raise ConfigError("schedule.tables", "a Swiss round seats every entrant once; "
                          "tables belongs to kind = \"balanced\"")


def _gauntlet_schedule(schedule: ScheduleConfig, raw: dict[str, Any]) -> ScheduleConfig:
    """A gauntlet's challenger and stopping rule (defaults: the rule's own);
    the keys are refused in other kinds, and the other kinds' keys in it."""
    from dataclasses import replace

    from arena.tournament.gauntlet import StoppingRule

    if schedule.kind is not ScheduleKind.GAUNTLET:
        for key in GAUNTLET_KEYS:
            if key in raw:
                raise ConfigError(f"schedule.{key}", 'only kind = "gauntlet" has ' + key
                                  + '; remove it or set kind = "gauntlet"')
        return schedule
    for key, why in (("rounds", "swiss"), ("tables", "balanced"),
                     ("until_separated", "the other kinds: a gauntlet stops by its own rule")):
        if key in raw:
            raise ConfigError(f"schedule.{key}", f"belongs to {why}, not to a gauntlet")
    challenger = _str(raw, "challenger", "schedule.", None)
    if challenger is None:
        raise ConfigError("schedule.challenger", 'kind = "gauntlet" needs challenger = "NAME" '
                          "(the entrant that plays against the others)")
    rule = StoppingRule()
    return replace(schedule, challenger=challenger,
                   max_sets=_int(raw, "max_sets", "schedule.", rule.max_sets, minimum=1,
                                 maximum=100_000),
                   alpha=_float(raw, "alpha", "schedule.", rule.alpha, above=0, below=0.5),
                   effect=_float(raw, "effect", "schedule.", rule.effect, above=0, below=0.5))


_RULE_KEY = re.compile(r"rule option (\w+)")


def _check_rules(game: str, rules: dict[str, Any]) -> None:
    """Let the game judge its own rule options now, so a bad one fails before
    the first match (the game's message names the option and what it allows)."""
    try:
        table_seats(game, rules)
    except RuleConfigError as exc:
        named = _RULE_KEY.search(str(exc))
        key = f"rules.{named.group(1)}" if named and named.group(1) in rules else "rules"
        raise ConfigError(key, str(exc)) from None


def table_seats(game: str, rules: dict[str, Any] | None = None) -> int:
    """Seats at every table of ``game`` under ``rules`` (a rule such as
    ``players`` may change the game's usual count); RuleConfigError for
    rules the game refuses."""
    spec = get_game(game)
    if not rules:
        return spec.n_seats
    # A throwaway engine: only the game knows what its options mean.
    return spec.new_match(dict(rules), random.Random(0), None).n_seats


def load_config(path: Path | str) -> TournamentConfig:
    """Read and validate a tournament file."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            doc = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read the file: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"not valid TOML: {exc}") from None
    return parse_config(doc, base_dir=path.parent, source=path.resolve())


def config_from_wire(wire: dict[str, Any]) -> TournamentConfig:
    """The config back from its stored ``to_wire()`` form (TOML has no null,
    so absent values are dropped before the usual validation)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()
                    if v is not None and k not in ("source", "deals")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    doc = strip(wire)
    entrants = doc.pop("entrants", [])
    for entrant in entrants:
        if entrant.get("hosted") and "bot" in entrant:  # stored under its seat name
            entrant["name"] = entrant.pop("bot")
        if not entrant.get("remote"):
            entrant.pop("remote", None)
        else:
            entrant.pop("cwd", None)
    doc["entrant"] = entrants
    source = wire.get("source")
    return parse_config(doc, base_dir=Path(source).parent if source else ".",
                        source=Path(source) if source else None)
