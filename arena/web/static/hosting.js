// The owner's view of a hosted bot's versions: asks the API with the token
// typed into the form (never stored) and shows reasons and build logs.
"use strict";
(function () {
  const view = document.getElementById("owner-view");
  if (!view) return;
  const bot = view.dataset.bot;
  const out = document.getElementById("owner-output");
  const text = (tag, value) => { const el = document.createElement(tag); el.textContent = value; return el; };
  document.getElementById("owner-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = document.getElementById("owner-token").value.trim();
    const headers = { Authorization: "Bearer " + token };
    out.replaceChildren();
    const listing = await fetch(`/api/bots/${encodeURIComponent(bot)}/versions`, { headers });
    const body = await listing.json();
    if (!listing.ok) { out.append(text("p", body.error || listing.statusText)); return; }
    // Every version is fetched before any is shown, so the owner (and a test)
    // never reads a half-filled list.
    const boxes = [];
    for (const v of body.versions.slice().reverse()) {
      const box = document.createElement("section");
      box.append(text("h3", `v${v.version}: ${v.status}` + (v.reason ? ` — ${v.reason}` : "")));
      box.append(text("p", `files: ${(v.files || []).join(", ")}`));
      const log = await fetch(`/api/bots/${encodeURIComponent(bot)}/versions/${v.version}/log`, { headers });
      box.append(text("pre", log.ok ? await log.text() || "(the build printed nothing)" : "no log"));
      boxes.push(box);
    }
    out.replaceChildren(...boxes);
  });
})();
