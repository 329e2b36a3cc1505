"""HTTP errors: one exception type, JSON under ``/api``, HTML elsewhere.

Every API error has the body ``{"error": {"status": <int>, "message": <str>}}``
and the matching status code, including aiohttp's own 404/405 for unknown
routes and wrong methods, and 500 for bugs (logged, never detailed to the
client).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiohttp import web

from arena.storage.base import AlreadyExistsError, NotFoundError
from arena.web.render import error_page

log = structlog.get_logger(__name__)

API_PREFIX = "/api/"
MAX_LIMIT = 200
DEFAULT_LIMIT = 50
NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,32}")


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
    except Exception:
        log.exception("web_handler_failed", method=request.method, path=request.path)
        return render(500, "internal server error")


def _with_headers(response: web.Response, headers: dict[str, str] | None) -> web.Response:
    response.headers.update(headers or {})
    return response


# -- parameters -------------------------------------------------------------
def int_param(request: web.Request, name: str, default: int, *, lo: int,
              hi: int | None = None) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"query parameter {name!r} must be an integer, got {raw!r}") \
            from None
    if value < lo or (hi is not None and value > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise ApiError(400, f"query parameter {name!r} must be {bound}, got {value}")
    return value


def pagination(request: web.Request) -> tuple[int, int]:
    """``limit`` (1..200, default 50) and ``offset`` (>= 0, default 0)."""
    return (int_param(request, "limit", DEFAULT_LIMIT, lo=1, hi=MAX_LIMIT),
            int_param(request, "offset", 0, lo=0))


def page(key: str, items: list[Any], total: int, limit: int, offset: int) -> dict[str, Any]:
    return {key: items, "total": total, "limit": limit, "offset": offset}


def check_name(name: Any, what: str = "bot name") -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ApiError(400, f"{what} must be 1 to 32 characters of letters, digits, "
                            f"'_', '.' or '-'; got {name!r}")
    return name
