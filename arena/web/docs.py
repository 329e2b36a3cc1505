"""The project's documents as pages: the rules, the protocol, the HTTP API.

One source: each page is rendered at request time from the Markdown file
the repository keeps (``protocol/README.md``, ``arena/web/API.md``, and each
game's rules, which its spec names: ``extra["web"]["rules"]``, e.g.
``seeds/thirteen.md`` for ``/rules?game=thirteen``), so the site can never
disagree with the files. They are looked up relative to the source checkout
first, then under ``<prefix>/share/muushig-arena/`` where an installed
package puts them.
"""

from __future__ import annotations

import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from markdown_it import MarkdownIt
from markdown_it.token import Token

from arena.games import UnknownGameError, game_names, get_game

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the checkout (or site-packages)
SHARE = Path(sys.prefix) / "share" / "muushig-arena"
SEARCH_ROOTS: tuple[Path, ...] = (PACKAGE_ROOT, SHARE)


@dataclass(frozen=True)
class Document:
    name: str
    path: str  # relative to a search root
    url: str
    label: str  # the header link's text


STATIC_DOCUMENTS = (
    Document("protocol", "protocol/README.md", "/protocol", "Protocol"),
    Document("api", "arena/web/API.md", "/docs/api", "API"),
)


class DocumentMissingError(LookupError):
    """The Markdown file of a document is not in this installation."""

    def __init__(self, document: Document) -> None:
        super().__init__(
            f"{document.path} is not installed with this copy of the arena; read it in the "
            "source repository, or reinstall the package so that it brings its documents")
        self.document = document


def _game_web(game: str) -> dict[str, str]:
    try:
        return dict(get_game(game).extra.get("web") or {})
    except UnknownGameError:
        return {}


def rules_document(game: str) -> Document | None:
    """The rules page of ``game``, or None when its spec names no rules file."""
    source = _game_web(game).get("rules")
    if not source:
        return None
    return Document(f"rules-{game}", source, "/rules?" + urlencode({"game": game}), "Rules")


def protocol_url(game: str) -> str:
    """Where the protocol page describes ``game``'s messages."""
    return _game_web(game).get("protocol") or "/protocol"


def documents() -> dict[str, Document]:
    """Every document the site renders, by name."""
    found = {d.name: d for d in STATIC_DOCUMENTS}
    for game in game_names():
        rules = rules_document(game)
        if rules is not None:
            found[rules.name] = rules
    return found


def find_path(document: Document, roots: tuple[Path, ...] | None = None) -> Path:
    for root in SEARCH_ROOTS if roots is None else roots:
        candidate = root / document.path
        if candidate.is_file():
            return candidate
    raise DocumentMissingError(document)


def find_document(name: str, roots: tuple[Path, ...] | None = None) -> Path:
    return find_path(documents()[name], roots)


def game_docs_links(game: str) -> str:
    """The links every page about one game carries: its rules, its protocol."""
    rules = rules_document(game)
    links = [] if rules is None else [f'<a href="{html.escape(rules.url)}">rules</a>']
    links.append(f'<a href="{html.escape(protocol_url(game))}">protocol</a>')
    return f'<span class="game-docs">({" · ".join(links)})</span>'


# -- rendering ---------------------------------------------------------------
# html: the files are the project's own, and the protocol page folds its
# frame dumps in <details>; nothing a user sends is ever rendered here.
_md = MarkdownIt("commonmark", {"html": True}).enable("table")
_cache: dict[Path, tuple[tuple[int, int], str, str]] = {}


def _slug(text: str) -> str:
    """A heading's anchor as GitHub makes it: ``1. Framing`` -> ``1-framing``."""
    text = re.sub(r"[^\w\- ]", "", text.lower(), flags=re.UNICODE)
    return text.strip().replace(" ", "-")


def _link_target(href: str) -> str:
    """Links between the documents point to their pages."""
    path, sep, anchor = href.partition("#")
    for document in documents().values():
        if path and document.path.endswith(path.lstrip("./")):
            return document.url + (sep + anchor if sep else "")
    return href


def _adjust(tokens: list[Token]) -> str:
    """Give headings ids and rewrite links; return the first h1's text."""
    title = ""
    used: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and i + 1 < len(tokens):
            text = tokens[i + 1].content
            slug = _slug(text) or "section"
            used[slug] = used.get(slug, 0) + 1
            token.attrSet("id", slug if used[slug] == 1 else f"{slug}-{used[slug] - 1}")
            if token.tag == "h1" and not title:
                title = text
        for child in token.children or []:
            if child.type == "link_open":
                child.attrSet("href", _link_target(str(child.attrGet("href") or "")))
    return title


def render_document(document: Document) -> tuple[str, str]:
    """``(title, html)`` of a document, re-rendered when its file changes."""
    path = find_path(document)
    stat = path.stat()
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _cache.get(path)
    if cached is None or cached[0] != key:
        tokens = _md.parse(path.read_text("utf-8"))
        title = _adjust(tokens) or document.label
        cached = (key, title, _md.renderer.render(tokens, _md.options, {}))
        _cache[path] = cached
    return cached[1], cached[2]
