// Live updates for the standings and tournament pages.
// The page names its channels in data-live-channels; each container with a
// data-partial URL is refetched (server-rendered HTML) when the hub says it
// changed, so there is one renderer: the server's.
"use strict";

(() => {
  const root = document.querySelector("[data-live-channels]");
  if (!root || !window.EventSource) return;
  const status = document.getElementById("live-status");
  const channels = root.dataset.liveChannels.split(/\s+/).filter(Boolean);
  const inFlight = new Map(); // container id -> {running, again}

  function setStatus(text) {
    if (status) status.textContent = text;
  }

  async function refresh(id) {
    const box = document.getElementById(id);
    if (!box || !box.dataset.partial) return;
    const state = inFlight.get(id) || { running: false, again: false };
    inFlight.set(id, state);
    if (state.running) { state.again = true; return; } // coalesce bursts
    state.running = true;
    try {
      do {
        state.again = false;
        const response = await fetch(box.dataset.partial, { headers: { Accept: "text/html" } });
        if (response.ok) {
          box.innerHTML = await response.text();
          box.dataset.version = String(Number(box.dataset.version || 0) + 1);
        }
      } while (state.again);
      setStatus(`Updated at ${new Date().toLocaleTimeString()}.`);
    } catch (e) {
      setStatus("Live updates interrupted; retrying.");
    } finally {
      state.running = false;
    }
  }

  // The home page holds one ladder per game, the bots' and the people's
  // alike, each in its own container (arena/web/ladder_view.py draws them);
  // with a scope, only that scope's ladders.
  function ladders(scope) {
    const boxes = Array.from(document.querySelectorAll("section.ladder > [data-partial]"));
    return boxes
      .filter((box) => !scope || new URL(box.dataset.partial, location.href).searchParams.get("scope") === scope)
      .map((box) => box.id);
  }

  function onProgress(message) {
    const bar = document.getElementById("progress");
    const text = document.getElementById("progress-text");
    if (bar) { bar.max = Math.max(message.total, 1); bar.value = message.done; bar.textContent = `${message.done}/${message.total}`; }
    if (text) text.textContent = `${message.done} of ${message.total} matches played`;
  }

  Arena.subscribe(channels, (message) => {
    switch (message.type) {
      case "standings_changed": ["standings", ...ladders(message.scope), "charts", "matches", "tournaments", "gauntlet"].forEach(refresh); break;
      case "match_started": case "match_ended": refresh("live"); break;
      case "progress": onProgress(message); refresh("matches"); refresh("tournaments"); refresh("gauntlet"); break;
      case "gap": ["standings", ...ladders(), "charts", "live", "matches", "tournaments", "gauntlet"].forEach(refresh); break;
      default: break;
    }
  }, { onStatus: (ok) => setStatus(ok ? "Live updates on." : "Live updates interrupted; reconnecting.") });
})();
