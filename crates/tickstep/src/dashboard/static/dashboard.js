// The dashboard's one script (docs/serve.md §13.3, §13.6, §13.18), served as a file under the
// page's CSP. Dates: each <time datetime> gets the viewer's local date as its hover title.
// Actions: a confirm dialog in place of the confirm page. The last hour: a bar chart per series
// as SVG elements, and the same numbers as a table. The live view: one EventSource, a bar per
// frame against the budget, the hot tasks as rows and the counters as text. Everything is set
// with textContent, never as HTML.
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

  // The last hour (docs/serve.md §13.18): `m` is the minutes' JSON, from the page (a store's)
  // or from each live event (a runtime's).
  const SVG = "http://www.w3.org/2000/svg";
  const CHARTS = {
    firings: { empty: "no firings in the last hour", fill: "#1f4e79" },
    faults: { empty: "no faults in the last hour", fill: "#b42318" },
    missed: { empty: "no missed points in the last hour", fill: "#8a5a00" },
    p99: { empty: "no firings, so no lateness, in the last hour", fill: "#9ab8d6", inner: "p50", innerFill: "#1f4e79", seconds: true },
  };
  function svgEl(parent, name, attrs, text) {
    const el = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { el.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) el.textContent = text;
    parent.appendChild(el);
    return el;
  }
  function minuteOf(m, i) {
    return new Date((m.start + i * 60) * 1000).toISOString().slice(11, 16);
  }
  function lateness(s) {
    if (s <= 0) return "0";
    return s < 1 ? (s * 1000).toFixed(s < 0.01 ? 2 : 1) + " ms" : s.toFixed(1) + " s";
  }
  // A round top for the scale: 1, 2 or 5 times a power of ten, at least the largest value.
  function roundUp(v) {
    if (v <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    return [1, 2, 5, 10].map(function (k) { return k * p; }).find(function (t) { return t >= v; });
  }
  function chart(series, m) {
    const figure = document.getElementById("chart-" + series);
    if (!figure) return;
    const svg = figure.querySelector("svg");
    const look = CHARTS[series];
    const values = m[series] || [];
    const inner = look.inner ? m[look.inner] || [] : [];
    const w = Math.max(240, Math.round(svg.clientWidth || 640));
    const h = 140, left = 52, bottom = 20, top = 10;
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const most = Math.max.apply(null, values.concat([0]));
    const scale = look.seconds ? (most > 0 ? most : 1) : roundUp(most);
    const plotH = h - top - bottom, plotW = w - left - 4;
    const label = function (v) { return look.seconds ? lateness(v) : String(v); };
    // Axes: the scale's top and 0 on the left, the hour's ends below.
    svgEl(svg, "line", { x1: left, y1: top, x2: left, y2: h - bottom, class: "axis" });
    svgEl(svg, "line", { x1: left, y1: h - bottom, x2: w - 4, y2: h - bottom, class: "axis" });
    svgEl(svg, "text", { x: left - 4, y: top + 8, "text-anchor": "end", class: "tick" }, label(scale));
    svgEl(svg, "text", { x: left - 4, y: h - bottom, "text-anchor": "end", class: "tick" }, "0");
    svgEl(svg, "text", { x: left, y: h - 4, class: "tick" }, values.length ? minuteOf(m, 0) + " UTC" : "");
    svgEl(svg, "text", { x: w - 4, y: h - 4, "text-anchor": "end", class: "tick" }, "now");
    const bw = plotW / Math.max(values.length, 1);
    values.forEach(function (v, i) {
      if (v <= 0) return;
      const bh = Math.max(1, (v / scale) * plotH);
      const bar = svgEl(svg, "rect", {
        x: (left + 1 + i * bw).toFixed(1), y: (h - bottom - bh).toFixed(1),
        width: Math.max(1, bw - 1).toFixed(1), height: bh.toFixed(1), fill: look.fill, class: "bar",
      });
      let tip = minuteOf(m, i) + " UTC: " + label(v);
      if (look.inner) {
        const p50 = inner[i] || 0;
        const ih = Math.max(1, (p50 / scale) * plotH);
        svgEl(svg, "rect", {
          x: (left + 1 + i * bw).toFixed(1), y: (h - bottom - ih).toFixed(1),
          width: Math.max(1, bw - 1).toFixed(1), height: ih.toFixed(1), fill: look.innerFill, class: "bar inner",
        });
        tip = minuteOf(m, i) + " UTC: p50 " + lateness(p50) + ", p99 " + lateness(v);
      }
      svgEl(bar, "title", {}, tip);
    });
    if (most <= 0) {
      svgEl(svg, "text", { x: left + plotW / 2, y: top + plotH / 2, "text-anchor": "middle", class: "empty" }, look.empty);
    }
    figure.dataset.drawn = String(values.filter(function (v) { return v > 0; }).length);
  }
  function sum(values) { return (values || []).reduce(function (a, b) { return a + b; }, 0); }
  function drawHour(m) {
    if (!m || !m.firings) return;
    Object.keys(CHARTS).forEach(function (series) { chart(series, m); });
    const firings = sum(m.firings);
    const head = firings === 0 ? "no firings in the last hour"
      : firings + (firings === 1 ? " firing" : " firings") + " in the last hour; lateness p50 " +
        upTo(m.hour_p50) + ", p99 " + upTo(m.hour_p99);
    const summary = document.getElementById("hour-summary");
    if (summary) summary.textContent = head + "; faults: " + sum(m.faults) + "; missed points: " + sum(m.missed);
    const table = document.getElementById("minutes-table");
    if (!table) return;
    while (table.rows.length > 1) table.deleteRow(1);
    for (let i = m.firings.length - 1; i >= 0; i--) {
      const tr = table.insertRow();
      [minuteOf(m, i), m.firings[i], m.faults[i], m.missed[i], lateness(m.p50[i]), lateness(m.p99[i])].forEach(function (v, j) {
        const td = tr.insertCell();
        td.textContent = String(v);
        if (j > 0) td.className = "num";
      });
    }
  }
  function upTo(s) { return s < 0.001 ? "under 1 ms" : "up to " + (s < 1 ? (s * 1000).toFixed(1) + " ms" : s.toFixed(1) + " s"); }
  const hourCard = document.getElementById("hour");
  if (hourCard && hourCard.dataset.minutes) drawHour(JSON.parse(hourCard.dataset.minutes));

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
  // tens of microseconds are visible. The left axis has the scale's top and 0, the bottom says
  // which end is newest, and the budget line carries its own label; when the budget is above
  // the scale, the top line says so instead.
  function draw(period) {
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(200, Math.round(canvas.clientWidth * ratio));
    const h = Math.max(80, Math.round(canvas.clientHeight * ratio));
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    ctx.clearRect(0, 0, w, h);
    const top = 18 * ratio, bottom = 16 * ratio, left = 56 * ratio;
    let most = period / 20;
    bars.forEach(function (f) { if (f[0] > most) most = f[0]; });
    most *= 1.25;
    const plot = h - top - bottom;
    const scale = plot / most;
    const bw = (w - left) / KEPT;
    // The newest frame at the right edge, as the axis says.
    const first = KEPT - bars.length;
    bars.forEach(function (f, i) {
      ctx.fillStyle = f[0] > period ? "#b42318" : "#1a7f37";
      const bh = Math.max(1, Math.min(plot, f[0] * scale));
      ctx.fillRect(left + (first + i) * bw, h - bottom - bh, Math.max(1, bw - 1), bh);
    });
    ctx.strokeStyle = "#8c959f";
    ctx.beginPath();
    ctx.moveTo(left - 0.5, top);
    ctx.lineTo(left - 0.5, h - bottom);
    ctx.lineTo(w, h - bottom);
    ctx.stroke();
    ctx.fillStyle = "#5b6470";
    ctx.font = (11 * ratio) + "px sans-serif";
    ctx.textAlign = "right";
    ctx.fillText(micros(most), left - 4 * ratio, top + 8 * ratio);
    ctx.fillText("0", left - 4 * ratio, h - bottom);
    ctx.fillText("newest →", w - 2 * ratio, h - 3 * ratio);
    ctx.textAlign = "left";
    ctx.fillText("older frames", left, h - 3 * ratio);
    if (period <= most) {
      const y = h - bottom - period * scale;
      ctx.strokeStyle = "#1b1f24";
      ctx.setLineDash([6 * ratio, 4 * ratio]);
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(w, y);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = "#1b1f24";
      ctx.textAlign = "right";
      ctx.fillText("budget " + micros(period), w - 4 * ratio, y - 3 * ratio);
      ctx.textAlign = "left";
    } else {
      ctx.fillText("budget " + micros(period) + ": above this scale", left + 4 * ratio, 12 * ratio);
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
    drawHour(s.minutes);
    text("live-state", "live, " + updates + " updates");
  };
  source.onerror = function () { text("live-state", "disconnected; retrying"); };
})();
