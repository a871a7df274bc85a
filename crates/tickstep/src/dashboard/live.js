// The dashboard's live view (docs/serve.md §13.6): one EventSource, a bar per frame against the
// budget line, the hot tasks as rows and the counters as text. Everything is set with
// textContent, never as HTML.
"use strict";
(function () {
  const canvas = document.getElementById("frames");
  if (!canvas) return;
  const ctx = canvas.getContext("2d");
  const bars = [];
  const KEPT = 240;
  function text(id, value) {
    const el = document.getElementById(id);
    if (el) el.textContent = String(value);
  }
  function draw(period) {
    const w = canvas.width, h = canvas.height;
    ctx.clearRect(0, 0, w, h);
    const scale = h / (2 * period);
    const bw = w / KEPT;
    bars.forEach(function (f, i) {
      ctx.fillStyle = f[0] > period ? "#c00" : "#4a4";
      // At least a pixel, so a frame far under budget still shows as run.
      const bh = Math.max(1, Math.min(h, f[0] * scale));
      ctx.fillRect(i * bw, h - bh, Math.max(1, bw - 1), bh);
    });
    ctx.strokeStyle = "#000";
    ctx.beginPath();
    ctx.moveTo(0, h / 2);
    ctx.lineTo(w, h / 2);
    ctx.stroke();
  }
  // The hot tasks' rows: cells made with textContent, so an origin label stays text.
  function hot(rows) {
    const table = document.getElementById("hot-tasks");
    if (!table || !rows) return;
    while (table.rows.length > 1) table.deleteRow(1);
    rows.forEach(function (r) {
      const tr = table.insertRow();
      r.forEach(function (v) { tr.insertCell().textContent = String(v); });
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
