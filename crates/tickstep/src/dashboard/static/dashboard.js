// The dashboard's one script (docs/serve.md §13.3, §13.6), served as a file under the page's CSP.
// Dates: each <time datetime> gets the viewer's local date as its hover title. Actions: a
// confirm dialog in place of the confirm page. The live view: one
// EventSource, a bar per frame against the budget, the hot tasks as rows and the counters as
// text. Everything is set with textContent, never as HTML.
"use strict";
(function () {
  // Times for people: the server wrote the relative form ("in 3 h 12 min") and UTC; the hover
  // shows the same instant in the browser's own zone.
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    const at = new Date(el.getAttribute("datetime"));
    if (!isNaN(at)) el.title = at.toLocaleString(undefined, { timeZoneName: "short" });
  });

  // Actions ask first: a link to the confirm page opens the same form in a dialog instead
  // (without this script the link is followed to that page).
  document.querySelectorAll("a[data-confirm]").forEach(function (link) {
    const dialog = document.getElementById(link.dataset.confirm);
    if (!dialog || typeof dialog.showModal !== "function") return;
    link.addEventListener("click", function (event) {
      event.preventDefault();
      dialog.showModal();
      const first = dialog.querySelector("input:not([type=hidden])");
      if (first) first.focus();
    });
  });

  const canvas = document.getElementById("frames");
  if (!canvas) return;
  const ctx = canvas.getContext("2d");
  const bars = [];
  const KEPT = 240;
  function text(id, value) {
    const el = document.getElementById(id);
    if (el) el.textContent = String(value);
  }
  // Bars scaled to the largest frame shown (at least a twentieth of the budget), so frames of
  // tens of microseconds are visible; the budget line is drawn when it is in range, and the
  // scale is written at the top left.
  function draw(period) {
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(200, Math.round(canvas.clientWidth * ratio));
    const h = Math.max(80, Math.round(canvas.clientHeight * ratio));
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    ctx.clearRect(0, 0, w, h);
    const top = 16 * ratio;
    let most = period / 20;
    bars.forEach(function (f) { if (f[0] > most) most = f[0]; });
    most *= 1.25;
    const scale = (h - top) / most;
    const bw = w / KEPT;
    bars.forEach(function (f, i) {
      ctx.fillStyle = f[0] > period ? "#b42318" : "#1a7f37";
      const bh = Math.max(1, Math.min(h - top, f[0] * scale));
      ctx.fillRect(i * bw, h - bh, Math.max(1, bw - 1), bh);
    });
    ctx.fillStyle = "#5b6470";
    ctx.font = (11 * ratio) + "px sans-serif";
    ctx.fillText("0 to " + micros(most) + " per frame; budget " + micros(period), 4 * ratio, 12 * ratio);
    if (period <= most) {
      const y = h - period * scale;
      ctx.strokeStyle = "#1b1f24";
      ctx.setLineDash([6 * ratio, 4 * ratio]);
      ctx.beginPath();
      ctx.moveTo(0, y);
      ctx.lineTo(w, y);
      ctx.stroke();
      ctx.setLineDash([]);
    }
  }
  function micros(us) {
    return us >= 1000 ? (us / 1000).toFixed(1) + " ms" : Math.round(us) + " µs";
  }
  // The hot tasks' rows: cells made with textContent, so an origin label stays text.
  function hot(rows) {
    const table = document.getElementById("hot-tasks");
    if (!table || !rows) return;
    while (table.rows.length > 1) table.deleteRow(1);
    rows.forEach(function (r) {
      const tr = table.insertRow();
      r.forEach(function (v, i) {
        const td = tr.insertCell();
        td.textContent = String(v);
        if (i > 0) td.className = "num";
      });
    });
  }
  let updates = 0;
  const source = new EventSource("/dashboard/events");
  source.onmessage = function (event) {
    const s = JSON.parse(event.data);
    if (!s.frames) return;
    s.frames.forEach(function (f) { bars.push(f); });
    while (bars.length > KEPT) bars.shift();
    updates += 1;
    canvas.dataset.updates = String(updates);
    draw(s.period_us);
    text("budget", (s.period_us / 1000).toFixed(1) + " ms");
    text("over-budget", s.over_budget);
    text("overloads", s.overloads);
    text("deferred", s.deferred_last_step);
    text("pending", s.pending.map(function (p) { return p[0] + " " + p[1]; }).join(", "));
    text("commands-running", s.commands_running);
    text("schedules-live", s.schedules_live);
    if (s.schedules_paused !== undefined) text("schedules-paused", s.schedules_paused);
    if (s.online !== undefined) text("online", s.online);
    hot(s.hot_tasks);
    text("live-state", "live, " + updates + " updates");
  };
  source.onerror = function () { text("live-state", "disconnected; retrying"); };
})();
