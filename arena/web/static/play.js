// The play page: a person's seat at an ordinary table (see docs/people.md).
// It shows only what the seat's messages hold -- the messages a bot in this
// seat reads -- and offers each legal action as a <button data-action>.
"use strict";

(() => {
  const { el, card, cardText, sortCards, suitText } = Arena;
  const root = document.getElementById("play");
  if (!root) return;
  const game = root.dataset.game;
  const TOKEN = "arena-person-token";
  const PLAYING = `arena-person-playing-${game}`;
  const $ = (id) => document.getElementById(id);
  const state = { name: null, match: null, seat: null, players: [], rules: null, after: -1,
                  request: null, deadline: 0, view: {}, rows: null, active: "front",
                  over: false };

  function token() { return localStorage.getItem(TOKEN); }
  function auth() { return { Authorization: `Bearer ${token()}` }; }
  function status(text) { $("status").textContent = text; }

  async function api(method, url, body) {
    const headers = { Accept: "application/json", ...(token() ? auth() : {}) };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(url, { method, headers,
      body: body === undefined ? undefined : JSON.stringify(body) });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error ? data.error.message : response.statusText);
    return data;
  }

  // -- who plays -----------------------------------------------------------------
  async function start() {
    if (!token()) {
      $("name-form").hidden = false;
      $("name").focus();
      return;
    }
    try {
      const me = await api("GET", "/api/people/me");
      showMe(me.name);
    } catch (err) {
      status(`${err.message}`);
      localStorage.removeItem(TOKEN);
      $("name-form").hidden = false;
      return;
    }
    if (localStorage.getItem(PLAYING)) sit();  // a reload: take the seat back
  }

  function showMe(name) {
    $("name-form").hidden = true;
    $("me").hidden = false;
    state.name = name;
    $("me").replaceChildren("You play as ",
      el("a", { href: `/people/${encodeURIComponent(name)}` }, name), ".");
    $("sit").hidden = false;
    showChoices();
  }

  $("name-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const made = await api("POST", "/api/people", { name: $("name").value });
      localStorage.setItem(TOKEN, made.token);
      showMe(made.name);
      $("sit").focus();
    } catch (err) { status(err.message); }
  });

  $("sit").addEventListener("click", () => sit());

  async function sit() {
    $("sit").hidden = true;
    $("choice").hidden = true;
    $("over").replaceChildren();
    try {
      const table = await api("POST", `/api/play/${game}`, chosen());
      Object.assign(state, { match: table.match, seat: table.seat, players: table.players,
                             after: -1, request: null, view: {}, rows: null, over: false });
      localStorage.setItem(PLAYING, table.match);
      $("table").hidden = false;
      $("log").replaceChildren();
      status(`Seated at seat ${table.seat + 1}.`);
      poll();
    } catch (err) { status(err.message); $("sit").hidden = false; showChoices(); }
  }

  // -- who sits at the table: house bots of a strength, or opted-in lobby bots ------
  async function showChoices() {
    let offer;
    try { offer = await api("GET", `/api/play/${game}/choices`); } catch (err) { return; }
    const option = (value, text, checked) => el("label", { class: "choice" },
      el("input", { type: "radio", name: "opponents", value, checked }), " ", text);
    const strength = (h) => (h.of > 1 ? ` (strength ${h.strength} of ${h.of})` : "");
    $("choice-options").replaceChildren(...[
      option("any", "Bots waiting to play people if there are any, house bots for the rest", true),
      ...offer.house.map((h) => option(`house:${h.strategy}`,
        `House bots only: ${h.strategy}${strength(h)}${h.default ? ", the server's own" : ""}`)),
      ...offer.lobby.map((b) => option(`lobby:${b.bot}`,
        `${b.bot}, waiting in the lobby ${Math.round(b.waiting_s)} s (house bots for the rest)`)),
      offer.lobby.length ? null : el("p", { class: "legend-note" },
        "No bot that plays people is waiting in the lobby now."),
    ].filter((x) => x !== null));
    $("choice").hidden = false;
  }

  function chosen() {
    const picked = document.querySelector("input[name=opponents]:checked");
    const value = picked ? picked.value : "any";
    if (value.startsWith("house:")) return { opponents: "house", house: value.slice(6) };
    if (value.startsWith("lobby:")) return { opponents: "lobby", bots: [value.slice(6)] };
    return undefined;  // the server's default: opted-in lobby bots first
  }

  // -- the seat's messages ----------------------------------------------------------
  async function poll() {
    const match = state.match;
    while (state.match === match && !state.over) {
      let page;
      try {
        page = await api("GET", `/api/play/${match}/messages?after=${state.after}`);
      } catch (err) {
        status(`${err.message}; retrying`);
        await new Promise((r) => setTimeout(r, 2000));
        continue;
      }
      state.after = page.last;
      for (const message of page.messages) handle(message);
      if (page.over && !page.messages.length) { ended(null); return; }
      if (!page.attached && !state.over) {
        status("Another page took this seat, or this one was away: reload to take it back.");
        return;
      }
    }
  }

  function handle(message) {
    if (message.type === "match_start") {
      state.players = message.players;
      state.seat = message.seat;
      state.rules = message.rules;  // the match's rule options: thirteen's foul check
    } else if (message.type === "event") {
      event(message.event);
    } else if (message.type === "request") {
      state.request = message;
      state.deadline = performance.now() + message.deadline_ms;
      state.view = { ...state.view, ...message.state };
      offer(message);
    } else if (message.type === "error") {
      status(message.message);
      if (state.request) offer(state.request);
    } else if (message.type === "match_end") {
      ended(message);
    }
    draw();
  }

  function event(ev) {
    const v = state.view;
    const who = (s) => (s === state.seat ? "You" : state.players[s] || `seat ${s + 1}`);
    let line = null;
    switch (ev.kind) {
      case "hand_start":
        Object.assign(v, { cards: ev.cards, face_up: ev.face_up, trump: ev.trump,
                           dealer: ev.dealer, trick: [], last_trick: null });
        line = `Hand ${ev.hand + 1} of round ${ev.round + 1}: trump ${suitText(ev.trump)}, face-up ` +
               `${cardText(ev.face_up)}.`;
        break;
      case "deal_start":
        Object.assign(v, { cards: ev.cards, deal: ev.deal });
        line = `Deal ${ev.deal + 1}: arrange your 13 cards.`;
        break;
      case "arranged": line = `${who(ev.seat)} arranged.`; break;
      case "decision": line = `${who(ev.seat)}: ${ev.choice}.`; break;
      case "exchange": line = `${who(ev.seat)} exchanged ${ev.count}.`; break;
      case "take": line = `${who(ev.seat)} ${ev.taken ? "took" : "left"} the face-up card.`; break;
      case "play":
        v.trick = [...(v.trick || []), [ev.seat, ev.card]];
        if (ev.seat === state.seat && v.cards) v.cards = v.cards.filter((c) => c !== ev.card);
        line = `${who(ev.seat)} played ${cardText(ev.card)}.`;
        break;
      case "trick":
        v.last_trick = ev.cards; v.trick = []; v.scores = ev.scores;
        line = `${who(ev.winner)} won the trick.`;
        break;
      case "timeout": line = `${who(ev.seat)} ran out of time.`; break;
      case "autopilot":
        line = ev.reason === "returned" ? `${who(ev.seat)} ${ev.seat === state.seat ? "are" : "is"} back.`
          : `Autopilot plays for ${who(ev.seat)} (${ev.reason}).`;
        break;
      case "showdown":
        v.showdown = ev; v.totals = ev.totals;
        line = `Showdown: you scored ${ev.scores[state.seat]}.`;
        break;
      case "deal_end": case "round_end": case "hand_end":
        if (ev.scores) v.scores = ev.scores;
        if (ev.totals) v.totals = ev.totals;
        line = ev.kind.replace("_", " ") + ".";
        break;
      default: break;
    }
    if (line) {
      const log = $("log");
      log.prepend(el("li", {}, line));
      while (log.children.length > 12) log.lastChild.remove();
    }
  }

  // -- drawing ---------------------------------------------------------------------------
  function draw() {
    const v = state.view;
    $("seats").replaceChildren(...state.players.map((name, i) => el("li",
      { class: i === state.seat ? "me" : null },
      `${name}${i === state.seat ? " (you)" : ""}`,
      v.scores ? ` · ${v.scores[i]} points` : "", v.totals ? ` · ${v.totals[i]}` : "",
      v.stars ? ` · ${v.stars[i]}★` : "", v.dealer === i ? " · dealer" : "")));
    const board = [];
    if (v.trump) board.push(el("p", { class: "trump" }, "Trump ", suitText(v.trump),
                                " · face-up ", card(v.face_up)));
    if (game === "muushig") {
      board.push(el("p", { class: "trick" }, "Trick: ",
        (v.trick || []).length ? v.trick.map(([s, c]) => el("span", { class: "played" },
          `${state.players[s] || s}: `, card(c))) : "none yet"));
      if (v.last_trick) board.push(el("p", { class: "last-trick" }, "Last trick: ",
        v.last_trick.map(([s, c]) => el("span", { class: "played" }, `${state.players[s] || s}: `, card(c)))));
    }
    $("board").replaceChildren(...board);
    if (game === "thirteen" && v.showdown) {
      board.push(el("div", { class: "showdown" }, el("p", {}, `Showdown of deal ${v.showdown.deal + 1}:`),
        el("ul", {}, v.showdown.arrangements.map((rows, s) => el("li", {},
          `${state.players[s] || s}${v.showdown.fouled[s] ? " (fouled)" : ""}: `,
          ["front", "middle", "back"].map((r) => el("span", { class: "played" }, rows[r].map((c) => card(c)), " ")),
          `${v.showdown.scores[s] >= 0 ? "+" : ""}${v.showdown.scores[s]}`)))));
    }
    // (thirteen's open request draws the hand itself: cards to pick)
    if (game !== "thirteen" || !state.request) {
      $("hand").replaceChildren(...sortCards(v.cards || []).map((c) => card(c)));
    }
  }

  function clock() {
    if (!state.request || state.over) { $("clock").textContent = ""; return; }
    const left = Math.max(0, Math.round((state.deadline - performance.now()) / 1000));
    $("clock").textContent = `Time left for this move: ${left} s`;
  }
  setInterval(clock, 500);

  // -- acting ------------------------------------------------------------------------------
  function wireValue(action) {
    return typeof action === "string" ? action : JSON.stringify(action);
  }

  function label(phase, action) {
    if (phase === "exchange") {
      return action.length ? `Discard ${action.map(cardText).join(" ")}` : "Keep all";
    }
    if (phase === "take") return action === null ? "Leave the face-up card" : `Take it, give up ${cardText(action)}`;
    if (typeof action === "string" && Arena.isCard(action)) return `Play ${cardText(action)}`;
    return action === "enter" ? "Enter (play this hand)" : action === "fold" ? "Fold" : String(action);
  }

  function offer(request) {
    const box = $("actions");
    if (request.legal === undefined) { window.PlayThirteen.offer(request, send, state.rules); return; }
    box.replaceChildren(el("p", {}, `Your move (${request.phase}):`),
      ...request.legal.map((action) => el("button", {
        type: "button", "data-action": wireValue(action),
        "aria-label": label(request.phase, action),
        onclick: () => send(request.id, action),
      }, typeof action === "string" && Arena.isCard(action) ? card(action) : label(request.phase, action))));
    const first = box.querySelector("button");
    if (first) first.focus();
  }

  async function send(id, action) {
    if (!state.request || state.request.id !== id) return;
    state.request = null;
    $("actions").replaceChildren();
    try {
      await api("POST", `/api/play/${state.match}/action`, { request_id: id, action });
    } catch (err) { status(err.message); }
  }
  window.PlaySend = send;

  function ended(message) {
    state.over = true;
    state.request = null;
    localStorage.removeItem(PLAYING);
    $("actions").replaceChildren();
    const result = message && message.result;
    const text = result && result.ranks ? `Your place: ${result.ranks[state.seat]}.` : "The match is over.";
    $("over").replaceChildren(el("section", { "data-match-over": "", class: "match-over" },
      el("h2", {}, "Match over"), el("p", {}, text),
      el("p", {}, el("a", { href: `/matches/${state.match}` }, "Replay and verify the decks")),
      state.name ? el("p", {}, el("a", { href: `/people/${encodeURIComponent(state.name)}` },
                                  "Your matches and rating")) : null,
      el("button", { type: "button", onclick: () => sit() }, "Play again")));
    status("The match is over.");
  }

  // The tab is closing: autopilot plays until a page comes back.
  window.addEventListener("pagehide", () => {
    if (state.match && !state.over && token()) {
      navigator.sendBeacon(`/api/play/${state.match}/leave`, token());
    }
  });

  start();
})();
