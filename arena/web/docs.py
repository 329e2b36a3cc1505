"""The project's documents as pages: the rules, the protocol, the HTTP API.

One source: each page is rendered at request time from the Markdown file
the repository keeps (``seeds/muushig.md``, ``protocol/README.md``,
``arena/web/API.md``), so the site can never disagree with the files. They
are looked up relative to the source checkout first, then under
``<prefix>/share/muushig-arena/`` where an installed package puts them.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the checkout (or site-packages)
SHARE = Path(sys.prefix) / "share" / "muushig-arena"
SEARCH_ROOTS: tuple[Path, ...] = (PACKAGE_ROOT, SHARE)


@dataclass(frozen=True)
class Document:
    name: str
    path: str  # relative to a search root
    url: str
    label: str  # the header link's text


DOCUMENTS = {d.name: d for d in (
    Document("rules", "seeds/muushig.md", "/rules", "Rules"),
    Document("protocol", "protocol/README.md", "/protocol", "Protocol"),
    Document("api", "arena/web/API.md", "/docs/api", "API"),
)}


class DocumentMissingError(LookupError):
    """The Markdown file of a document is not in this installation."""

    def __init__(self, document: Document) -> None:
        super().__init__(
            f"{document.path} is not installed with this copy of the arena; read it in the "
            "source repository, or reinstall the package so that it brings its documents")
        self.document = document


def find_document(name: str, roots: tuple[Path, ...] | None = None) -> Path:
    document = DOCUMENTS[name]
    for root in SEARCH_ROOTS if roots is None else roots:
        candidate = root / document.path
        if candidate.is_file():
            return candidate
    raise DocumentMissingError(document)


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
    for document in DOCUMENTS.values():
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


def render_document(name: str) -> tuple[str, str]:
    """``(title, html)`` of a document, re-rendered when its file changes."""
    path = find_document(name)
    stat = path.stat()
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _cache.get(path)
    if cached is None or cached[0] != key:
        tokens = _md.parse(path.read_text("utf-8"))
        title = _adjust(tokens) or DOCUMENTS[name].label
        cached = (key, title, _md.renderer.render(tokens, _md.options, {}))
        _cache[path] = cached
    return cached[1], cached[2]
