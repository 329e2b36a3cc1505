"""The web: JSON API, live streams and pages, on aiohttp.

:func:`.app.make_app` builds the application from a store, the live hub
(:mod:`arena.live`) and, when it may write, the store writer; ``arena.app``
starts it beside the bot server. Reads go through :mod:`.queries` and
:mod:`.scopes` (off the event loop), writes through :mod:`.accounts`,
live pages through :mod:`.sse`; :mod:`.pages`, :mod:`.render`,
:mod:`.charts`, :mod:`.plots` draw HTML and SVG; :mod:`.limits` keeps
visitors to their share.

It is the top layer with the CLI: it may import every layer below and none
imports it but :mod:`arena.app`.

Errors: a handler raises :class:`.errors.ApiError` (status and message a
visitor may read); :class:`.limits.BusyError` becomes 503 with
``Retry-After``; the store's ``StorageError`` s become 404, 409 or 503.
"""
