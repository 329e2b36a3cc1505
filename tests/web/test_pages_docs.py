"""The documents the other documents point to are pages of the site, rendered
from the same Markdown files at runtime; every page's header links them; an
error page looks like the rest of the site."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from arena.web import docs

ROOT = Path(__file__).resolve().parents[2]


async def html_of(client: TestClient, path: str, status: int = 200) -> str:
    response = await client.get(path)
    assert response.status == status, (path, response.status)
    assert response.content_type == "text/html"
    return await response.text()


@pytest.mark.parametrize(("path", "source", "heading"), [
    ("/protocol", "protocol/README.md", "The arena wire protocol, version 1"),
    ("/rules", "seeds/muushig.md", "Muushig, as the arena plays it"),
    ("/docs/api", "arena/web/API.md", "Arena HTTP API"),
])
async def test_documents_are_rendered_from_their_markdown(client: TestClient, path: str,
                                                          source: str, heading: str) -> None:
    html = await html_of(client, path)
    assert f">{heading}</h1>" in html
    text = (ROOT / source).read_text("utf-8")
    if re.search(r"^\|", text, re.M):
        assert "<table>" in html  # Markdown tables become tables
    if "```" in text:
        assert "<pre><code" in html and "```" not in html
    assert '<link rel="stylesheet" href="/static/style.css">' in html


async def test_a_document_shows_its_current_file(client: TestClient, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "muushig.md").write_text("# Edited rules\n\nNew text.\n")
    monkeypatch.setattr(docs, "SEARCH_ROOTS", (tmp_path,))
    html = await html_of(client, "/rules")
    assert ">Edited rules</h1>" in html and "New text." in html


async def test_a_missing_document_is_a_sentence_not_a_crash(
        client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docs, "SEARCH_ROOTS", (tmp_path,))
    html = await html_of(client, "/protocol", 404)
    assert "protocol/README.md" in html and "not installed" in html


def test_documents_are_found_from_an_installed_copy(tmp_path: Path) -> None:
    share = tmp_path / "share" / "muushig-arena"
    (share / "seeds").mkdir(parents=True)
    (share / "seeds" / "muushig.md").write_text("# Rules\n")
    assert docs.find_document("rules-muushig", roots=(tmp_path / "nothing", share)) == \
        share / "seeds" / "muushig.md"


@pytest.mark.parametrize("path", ["/", "/matches", "/protocol", "/rules", "/docs/api",
                                  "/bots/nobody", "/no/such/page"])
async def test_every_page_header_links_the_documents(client: TestClient, path: str) -> None:
    response = await client.get(path)
    html = await response.text()
    for href in ("/rules", "/protocol", "/docs/api"):
        assert f'<a href="{href}"' in html, (path, href)
    assert '<a href="/api">' not in html  # raw JSON is no page to send a reader to


async def test_error_pages_are_styled_and_say_what_happened(client: TestClient) -> None:
    html = await html_of(client, "/bots/nobody", 404)
    assert '<link rel="stylesheet" href="/static/style.css">' in html
    assert "no bot named &#x27;nobody&#x27;" in html
    html = await html_of(client, "/no/such/page", 404)
    assert "<h1>Not found</h1>" in html and "/no/such/page" in html


async def test_rendered_headings_can_be_linked(client: TestClient) -> None:
    html = await html_of(client, "/protocol")
    assert '<h2 id="1-framing">1. Framing</h2>' in html


async def test_the_api_index_points_to_its_rendered_documentation(client: TestClient) -> None:
    body = await (await client.get("/api")).json()
    assert body["documentation"] == "/docs/api"
    assert (await client.get(body["documentation"])).status == 200
