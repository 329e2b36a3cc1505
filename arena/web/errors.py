"""HTTP errors: one exception type, JSON under ``/api``, HTML elsewhere.

Every API error has the body ``{"error": {"status": <int>, "message": <str>}}``
and the matching status code, including aiohttp's own 404/405 for unknown
routes and wrong methods, 503 while the store fails or too many reads wait,
and 500 for bugs (logged, never detailed to the client).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web

from arena.storage.base import AlreadyExistsError, NotFoundError, StorageError
from arena.web.limits import BusyError
from arena.web.render import error_page
from protocol.names import BOT_NAME_RE, bot_name_problem

log = structlog.get_logger(__name__)

API_PREFIX = "/api/"
MAX_LIMIT = 200
DEFAULT_LIMIT = 50
MAX_OFFSET = 1_000_000_000  # far beyond any list; SQLite integers stop at 2**63
# Names and ids in paths and filters: tournament ids made from a tournament's
# name run to 49 characters, entrant names to 64. Bots registered over HTTP
# keep the bot port's 32 (BOT_NAME_RE).
NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
INT_RE = re.compile(r"-?[0-9]{1,19}")  # ASCII digits only: int() also reads "1_0", " 1", "٣"
STORE_FAILING = ("the arena cannot store anything right now (its storage is failing); "
                 "nothing was changed: retry later")


class StoreHealth:
    """Whether the web's last write reached the store (see ``/api/health``)."""

    def __init__(self) -> None:
        self.healthy = True
        self.last_error: str | None = None

    def failed(self, exc: BaseException) -> None:
        if self.healthy:  # logged once per outage, with its cause
            log.error("web_store_failing", error=str(exc))
        self.healthy = False
        self.last_error = str(exc)

    def ok(self) -> None:
        if not self.healthy:
            log.info("web_store_recovered")
        self.healthy = True
        self.last_error = None


class ApiError(Exception):
    """An error the client caused (or may retry), with its HTTP status."""

    def __init__(self, status: int, message: str, *,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def json_error(status: int, message: str, headers: dict[str, str] | None = None
               ) -> web.Response:
    return web.json_response({"error": {"status": status, "message": message}},
                             status=status, headers=headers)


def _html_error(status: int, message: str) -> web.Response:
    return web.Response(text=error_page(status, message), status=status,
                        content_type="text/html")


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    is_api = request.path.startswith(API_PREFIX) or request.path == "/api"
    render = json_error if is_api else (lambda s, m, h=None: _with_headers(_html_error(s, m), h))
    try:
        return await handler(request)
    except ApiError as e:
        return render(e.status, e.message, e.headers)
    except NotFoundError as e:
        return render(404, str(e) or "not found")
    except AlreadyExistsError as e:
        return render(409, str(e) or "already exists")
    except StorageError:
        # A read the store refused (writes are reported in accounts): the
        # cause is the store's, not the visitor's; no internal text.
        return render(503, STORE_FAILING, {"Retry-After": "5"})
    except BusyError as e:
        return render(503, str(e), {"Retry-After": "1"})
    except web.HTTPException as e:
        if e.status < 400:
            raise
        message = e.text if e.text and not e.text.startswith(f"{e.status}:") else e.reason
        if e.status == 404:
            message = f"no such resource: {request.method} {request.path}"
        elif e.status == 405:
            message = f"method {request.method} is not allowed on {request.path}"
        headers = {k: v for k, v in e.headers.items() if k.lower() == "allow"}
        return render(e.status, message, headers)
    except ConnectionResetError:
        raise  # the client went away; nothing to answer
    except (OSError, ValueError) as e:
        if request.path.startswith("/static/"):  # a name the file system refuses
            return render(404, f"no such resource: {request.method} {request.path[:100]}")
        log.exception("web_handler_failed", method=request.method, path=request.path[:200],
                      error=str(e))
        return render(500, "internal server error")
    except Exception:
        log.exception("web_handler_failed", method=request.method, path=request.path[:200])
        return render(500, "internal server error")


def _with_headers(response: web.Response, headers: dict[str, str] | None) -> web.Response:
    response.headers.update(headers or {})
    return response


# -- parameters -------------------------------------------------------------
def int_param(request: web.Request, name: str, default: int, *, lo: int,
              hi: int | None = None) -> int:
    """An integer query parameter in ``lo..hi`` (``hi`` at most MAX_OFFSET:
    a bigger number is no page of anything and SQLite could not take it)."""
    hi = MAX_OFFSET if hi is None else hi
    raw = request.query.get(name)
    if raw is None:
        return default
    if not INT_RE.fullmatch(raw):
        raise ApiError(400, f"query parameter {name!r} must be an integer, got {raw[:40]!r}")
    value = int(raw)
    if value < lo or value > hi:
        bound = f"between {lo} and {hi}"
        raise ApiError(400, f"query parameter {name!r} must be {bound}, got {value}")
    return value


def pagination(request: web.Request) -> tuple[int, int]:
    """``limit`` (1..200, default 50) and ``offset`` (>= 0, default 0)."""
    return (int_param(request, "limit", DEFAULT_LIMIT, lo=1, hi=MAX_LIMIT),
            int_param(request, "offset", 0, lo=0, hi=MAX_OFFSET))


def page(key: str, items: list[Any], total: int, limit: int, offset: int) -> dict[str, Any]:
    return {key: items, "total": total, "limit": limit, "offset": offset}


def page_of(key: str, items: list[Any], limit: int, offset: int) -> dict[str, Any]:
    """One page of a list held whole (standings, live matches, a match's events)."""
    return page(key, items[offset:offset + limit], len(items), limit, offset)


def check_name(name: Any, what: str = "bot name") -> str:
    """A name or id in a path or filter (1 to 64 characters)."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        shown = name[:40] + "..." if isinstance(name, str) and len(name) > 40 else name
        raise ApiError(400, f"{what} must be 1 to 64 characters of letters, digits, "
                            f"'_', '.' or '-'; got {shown!r}")
    return name


def check_bot_name(name: Any) -> str:
    """A new bot's name: what the bot port accepts in ``hello`` (1 to 32)."""
    problem = bot_name_problem(name)
    if problem is not None:
        raise ApiError(400, problem)
    return str(name)


def check_depth(value: Any, max_depth: int, what: str) -> None:
    """Refuse documents nested deeper than ``max_depth`` (walked without
    recursion, so the check itself cannot overflow the stack)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            raise ApiError(400, f"{what} is nested more than {max_depth} levels deep")
        stack.extend((child, depth + 1) for child in children)
