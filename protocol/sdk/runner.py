"""Running a bot without writing any asyncio: ``run_bot(strategy)``.

Connection settings come, in order of precedence, from the keyword arguments,
from command-line flags (``--host --port --token --name --encoding
--max-matches``; ``sys.argv`` unless ``argv=`` is given), from the
environment (``ARENA_HOST``, ``ARENA_PORT``, ``ARENA_TOKEN``, ``ARENA_NAME``,
``ARENA_ENCODING``, ``ARENA_MAX_MATCHES``; the arena sets the first four
when it starts a local bot), and finally from defaults (127.0.0.1:7000).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import structlog

from protocol.sdk.client import BotClient
from protocol.sdk.matches import BotError
from protocol.sdk.strategy import Strategy

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7000

log = structlog.get_logger("protocol.sdk")


class BotConfigError(BotError):
    """A setting is missing or unusable (e.g. no token anywhere)."""


@dataclass(frozen=True)
class BotSettings:
    host: str
    port: int
    token: str
    name: str | None
    encoding: str
    max_matches: int | None


def _parser(with_bot: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Connect a bot to a Muushig Arena server.",
                                     allow_abbrev=False)
    parser.add_argument("--host", help="server host (env ARENA_HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="server TCP port (env ARENA_PORT, default 7000)")
    parser.add_argument("--token", help="the bot's token (env ARENA_TOKEN)")
    parser.add_argument("--name", help="the bot's name, used in open mode (env ARENA_NAME)")
    parser.add_argument("--encoding", choices=["msgpack", "jsonl"], help="wire encoding (default msgpack)")
    parser.add_argument("--max-matches", type=int,
                        help="leave after this many matches (env ARENA_MAX_MATCHES; default: stay)")
    if with_bot:
        parser.add_argument("--bot", required=True, help="the strategy, as module:function")
    return parser


def resolve_settings(
    *,
    host: str | None = None,
    port: int | None = None,
    token: str | None = None,
    name: str | None = None,
    encoding: str | None = None,
    max_matches: int | None = None,
    argv: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> BotSettings:
    """Merge keyword arguments, command-line flags and environment.

    ``argv`` defaults to ``sys.argv[1:]``: the README's one-liner
    ``run_bot(play)`` must honour ``--port``; pass ``argv=[]`` to ignore the
    command line.
    """
    env = os.environ if env is None else env
    args = sys.argv[1:] if argv is None else list(argv)
    # Unknown flags belong to the bot author's own script: leave them be.
    flags, _ = _parser().parse_known_args(args)

    def pick(value: Any, flag: Any, var: str) -> Any:
        if value is not None:
            return value
        if flag is not None:
            return flag
        return env.get(var) or None

    raw_port = pick(port, flags.port, "ARENA_PORT")
    try:
        final_port = int(raw_port) if raw_port is not None else DEFAULT_PORT
    except ValueError:
        raise BotConfigError(f"port must be a number, got {raw_port!r}") from None
    raw_max = pick(max_matches, flags.max_matches, "ARENA_MAX_MATCHES")
    try:
        final_max = int(raw_max) if raw_max is not None else None
    except ValueError:
        raise BotConfigError(f"max_matches must be a number, got {raw_max!r}") from None
    if final_max is not None and final_max < 1:
        raise BotConfigError(f"max_matches must be at least 1, got {final_max}")
    final_token = pick(token, flags.token, "ARENA_TOKEN")
    if final_token is None:
        raise BotConfigError("no token: pass --token, set ARENA_TOKEN, or give run_bot(token=...)")
    return BotSettings(
        host=pick(host, flags.host, "ARENA_HOST") or DEFAULT_HOST,
        port=final_port,
        token=final_token,
        name=pick(name, flags.name, "ARENA_NAME"),
        encoding=pick(encoding, flags.encoding, "ARENA_ENCODING") or "msgpack",
        max_matches=final_max,
    )


def run_bot(
    strategy: Strategy,
    *,
    host: str | None = None,
    port: int | None = None,
    token: str | None = None,
    name: str | None = None,
    encoding: str | None = None,
    max_matches: int | None = None,
    argv: Sequence[str] | None = None,
    **client_options: Any,
) -> BotClient:
    """Connect and play until the server says bye (blocking).

    One line runs a bot: ``run_bot(my_strategy)`` reads the command line
    (``--host --port --token --name --max-matches``) and the ``ARENA_*``
    variables. Other keyword options go to :class:`BotClient` (``reconnect``,
    hooks, ...). Returns the finished client (its ``finished`` matches and
    ``fallbacks``, for instance). Ctrl-C leaves cleanly. A setting that is
    missing or unusable ends the process with one line on stderr and exit
    code 2 (catch :class:`BotConfigError` by calling :func:`resolve_settings`
    yourself to handle it differently); a server that refuses the hello (a
    wrong token), cannot be reached or is lost for good ends it with one line
    and exit code 1 (:class:`BotClient` raises them instead).
    """
    try:
        settings = resolve_settings(
            host=host, port=port, token=token, name=name, encoding=encoding,
            max_matches=max_matches, argv=argv,
        )
    except BotConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from None
    client = BotClient(
        settings.host,
        settings.port,
        settings.token,
        settings.name,
        strategy,
        settings.encoding,
        max_matches=settings.max_matches,
        **client_options,
    )
    try:
        asyncio.run(_run_until_terminated(client))
    except KeyboardInterrupt:
        log.info("interrupted; left the arena")
    except BotError as exc:
        # The message says what to fix; a traceback through asyncio would
        # bury it under two dozen lines of the SDK's insides.
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(1) from None
    if client.fallbacks:
        log.warning("the SDK answered for the strategy", fallbacks=client.fallbacks,
                    reasons={str(k): v for k, v in client.fallback_counts.items()})
    return client


async def _run_until_terminated(client: BotClient) -> None:
    """Run the client; SIGTERM (how the arena stops a local bot) leaves
    cleanly, saying bye, instead of killing the process mid-message."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    terminated = False

    def on_sigterm() -> None:
        nonlocal terminated
        terminated = True
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError, ValueError):
        pass  # not the main thread, or a platform without signal handlers
    try:
        await client.run()
    except asyncio.CancelledError:
        if not terminated:
            raise
        log.info("terminated; left the arena")
    finally:
        try:
            loop.remove_signal_handler(signal.SIGTERM)
        except (NotImplementedError, RuntimeError, ValueError):
            pass


def load_strategy(spec: str) -> Strategy:
    """``"package.module:function"`` → the function."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise BotConfigError(f"--bot must look like module:function, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BotConfigError(f"cannot import {module_name!r}: {exc}") from None
    strategy = getattr(module, attribute, None)
    if not callable(strategy):
        raise BotConfigError(f"{module_name!r} has no function {attribute!r}")
    return strategy


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m protocol.sdk --bot module:function [--host ...]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    parsed = _parser(with_bot=True).parse_args(args)
    try:
        # The current directory holds the author's module when run from it.
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        strategy = load_strategy(parsed.bot)
        run_bot(
            strategy,
            host=parsed.host, port=parsed.port, token=parsed.token, name=parsed.name,
            encoding=parsed.encoding, max_matches=parsed.max_matches, argv=[],
        )
    except BotError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    return 0
