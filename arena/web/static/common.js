// Shared helpers for the arena pages: cards, DOM building, live streams, SHA-256.
// No framework and no build step: this file is served as is.
"use strict";

const Arena = (() => {
  const SUITS = {
    H: { symbol: "\u2665", name: "hearts", color: "red" },
    S: { symbol: "\u2660", name: "spades", color: "black" },
    D: { symbol: "\u2666", name: "diamonds", color: "red" },
    C: { symbol: "\u2663", name: "clubs", color: "black" },
  };
  // Muushig uses 7 to A; the 52-card game also 2 to 6.
  const RANKS = {
    2: ["2", "2"], 3: ["3", "3"], 4: ["4", "4"], 5: ["5", "5"], 6: ["6", "6"],
    7: ["7", "7"], 8: ["8", "8"], 9: ["9", "9"], T: ["10", "10"],
    J: ["J", "jack"], Q: ["Q", "queen"], K: ["K", "king"], A: ["A", "ace"],
  };
  const SUIT_ORDER = "HSDC";
  const RANK_ORDER = "23456789TJQKA";

  /** Build an element: el("p", {class: "x"}, "text", child, ...). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function isCard(code) {
    return typeof code === "string" && code.length === 2 && code[0] in RANKS && code[1] in SUITS;
  }

  function cardName(code) {
    if (!isCard(code)) return String(code);
    return `${RANKS[code[0]][1]} of ${SUITS[code[1]].name}`;
  }

  function cardText(code) {
    if (!isCard(code)) return String(code);
    return RANKS[code[0]][0] + SUITS[code[1]].symbol;
  }

  /** A card as rank + suit symbol, red or black, named for screen readers. */
  function card(code, extraClass) {
    if (!isCard(code)) return el("span", { class: "card unknown" }, String(code));
    const suit = SUITS[code[1]];
    return el("span", {
      class: `card ${suit.color}${extraClass ? " " + extraClass : ""}`,
      role: "img", "aria-label": cardName(code), "data-card": code,
    }, el("span", { class: "rank", "aria-hidden": "true" }, RANKS[code[0]][0]),
       el("span", { class: "suit", "aria-hidden": "true" }, suit.symbol));
  }

  /** n face-down cards (their faces are not known to this page). */
  function backs(n) {
    const label = n === 1 ? "1 hidden card" : `${n} hidden cards`;
    return el("span", { class: "backs", role: "img", "aria-label": label },
      Array.from({ length: n }, () => el("span", { class: "card back", "aria-hidden": "true" })));
  }

  function sortCards(cards) {
    const key = (c) => SUIT_ORDER.indexOf(c[1]) * RANK_ORDER.length + RANK_ORDER.indexOf(c[0]);
    return [...cards].sort((a, b) => key(a) - key(b));
  }

  function suitText(suit) {
    return suit in SUITS ? `${SUITS[suit].symbol} ${SUITS[suit].name}` : String(suit);
  }

  async function getJSON(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error ? body.error.message : response.statusText);
    return body;
  }

  /** Subscribe to hub channels over SSE; returns the EventSource. */
  function subscribe(channels, onMessage, options = {}) {
    const params = new URLSearchParams();
    for (const c of channels) params.append("channel", c);
    if (options.after !== undefined && options.after !== null) params.set("after", options.after);
    const source = new EventSource(`/api/live?${params}`);
    source.onmessage = (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch (e) { return; }
      onMessage(message);
    };
    if (options.onStatus) {
      source.onopen = () => options.onStatus(true);
      source.onerror = () => options.onStatus(false);
    }
    return source;
  }

  // SHA-256 without crypto.subtle, which browsers only offer on secure
  // origins (https or localhost); an arena reached over plain http elsewhere
  // still gets its deals checked.
  const K = [], H0 = [];
  (() => {
    const primes = [];
    for (let n = 2; primes.length < 64; n++) {
      if (primes.every((p) => n % p !== 0)) primes.push(n);
    }
    const frac = (x) => Math.floor((x - Math.floor(x)) * 4294967296) | 0;
    primes.forEach((p, i) => { K.push(frac(Math.cbrt(p))); if (i < 8) H0.push(frac(Math.sqrt(p))); });
  })();

  function sha256Fallback(text) {
    const bytes = new TextEncoder().encode(text);
    const size = ((bytes.length + 9 + 63) >> 6) << 6;
    const buffer = new Uint8Array(size);
    buffer.set(bytes);
    buffer[bytes.length] = 0x80;
    const view = new DataView(buffer.buffer);
    const bits = bytes.length * 8;
    view.setUint32(size - 8, Math.floor(bits / 4294967296));
    view.setUint32(size - 4, bits >>> 0);
    const rotr = (x, n) => (x >>> n) | (x << (32 - n));
    const W = new Int32Array(64);
    const h = H0.slice();
    for (let offset = 0; offset < size; offset += 64) {
      for (let i = 0; i < 16; i++) W[i] = view.getInt32(offset + i * 4);
      for (let i = 16; i < 64; i++) {
        const s0 = rotr(W[i - 15], 7) ^ rotr(W[i - 15], 18) ^ (W[i - 15] >>> 3);
        const s1 = rotr(W[i - 2], 17) ^ rotr(W[i - 2], 19) ^ (W[i - 2] >>> 10);
        W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
      }
      let [a, b, c, d, e, f, g, hh] = h;
      for (let i = 0; i < 64; i++) {
        const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        hh = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      [a, b, c, d, e, f, g, hh].forEach((v, i) => { h[i] = (h[i] + v) | 0; });
    }
    return h.map((v) => (v >>> 0).toString(16).padStart(8, "0")).join("");
  }

  /**
   * Follow a live match for a replay viewer: ``handlers.event(message)`` for
   * each event after ``after``; after a gap, the match detail fetched anew to
   * ``handlers.reload(detail)``; once it has ended, its stored detail to
   * ``handlers.ended(detail)`` (the store may record the result a moment after
   * the hub announces it, so it is asked again while it still says live) and
   * the page's status line updated.
   */
  function followMatch(matchId, after, handlers) {
    const url = `/api/matches/${encodeURIComponent(matchId)}`;
    async function ended(attempt) {
      const next = await getJSON(url);
      if (next.live && attempt < 20) { setTimeout(() => ended(attempt + 1), 250 * (attempt + 1)); return; }
      const status = document.getElementById("match-status");
      if (status) { status.textContent = next.match.status; status.className = `status ${next.match.status}`; }
      handlers.ended(next);
    }
    const source = subscribe([`match:${matchId}`], async (message) => {
      if (message.type === "event") {
        handlers.event(message);
      } else if (message.type === "match_ended") {
        source.close();
        ended(0);
      } else if (message.type === "gap") {
        source.close();
        handlers.reload(await getJSON(url));
      }
    }, { after });
    return source;
  }

  /** Lowercase hex SHA-256 of a UTF-8 string. */
  async function sha256Hex(text) {
    if (window.crypto && crypto.subtle && crypto.subtle.digest) {
      const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
      return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    }
    return sha256Fallback(text);
  }

  return { el, card, backs, cardName, cardText, isCard, sortCards, suitText, getJSON,
           subscribe, followMatch, sha256Hex, sha256Fallback };
})();
