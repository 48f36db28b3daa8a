// flowrt dashboard: renders the master's snapshot (pushed as server-sent events) and, on
// request, a session's detail, a traced step's timeline and a session's placed graph.
// Charts are plotly.js; tables are plain DOM (text only: nothing from the server is HTML).
"use strict";

const state = { snapshot: null, session: null, sessionTimer: null };
const PALETTE = ["#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2",
                 "#65a30d", "#db2777", "#4b5563", "#7c3aed", "#ea580c", "#0d9488"];

function $(sel) { return document.querySelector(sel); }

function el(tag, text, attrs) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function row(cells, attrs) {
  const tr = el("tr", null, attrs);
  for (const c of cells) {
    const td = el("td");
    if (c instanceof Node) td.appendChild(c); else td.textContent = c === undefined ? "" : c;
    tr.appendChild(td);
  }
  return tr;
}

function link(text, onclick, attrs) {
  const a = el("a", text, attrs);
  a.addEventListener("click", (ev) => { ev.preventDefault(); onclick(); });
  return a;
}

function bytes(n) {
  if (!n) return "0";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(n < 10 && i ? 1 : 0)} ${units[i]}`;
}

function duration(s) {
  if (s === undefined || s === null) return "";
  if (s < 120) return `${s.toFixed(0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(0)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

function shortHandle(h) { return h ? h.slice(0, 8) : ""; }

function badge(text, cls) { return el("span", text, { class: `badge ${cls}` }); }

// -- live snapshot ---------------------------------------------------------------------

function connect() {
  const source = new EventSource("/api/events");
  source.addEventListener("snapshot", (ev) => {
    $("#live").textContent = "live";
    $("#live").className = "badge up";
    render(JSON.parse(ev.data));
  });
  source.onerror = () => {
    $("#live").textContent = "offline";
    $("#live").className = "badge down";
  };
}

function render(snap) {
  state.snapshot = snap;
  $("#master-title").textContent = snap.title || "";
  $("#uptime").textContent = `master up ${duration(snap.uptime_s)}`;
  renderTasks(snap.tasks);
  renderSteps(snap.steps);
  renderSessions(snap.sessions, snap.closed_sessions);
}

function renderTasks(tasks) {
  const body = $("#tasks tbody");
  body.replaceChildren();
  for (const t of tasks) {
    const s = t.stats || {};
    const recv = s.recv_bytes || {};
    body.appendChild(row([
      t.name, t.address,
      badge(t.up ? "up" : "down", t.up ? "up" : "down"),
      t.devices.length,
      s.uptime_s !== undefined ? duration(s.uptime_s) : "",
      s.rss_bytes !== undefined ? bytes(s.rss_bytes) : "",
      s.cpu_s !== undefined ? `${s.cpu_s.toFixed(1)} s` : "",
      s.registered_graphs !== undefined ? s.registered_graphs : "",
      s.steps_in_flight !== undefined ? s.steps_in_flight : "",
      s.recv_bytes ? [recv.grpc, recv.local, recv.shm, recv.in_process].map(bytes).join(" / ")
                   : "",
      s.sent_bytes ? [s.sent_bytes.grpc, s.sent_bytes.local].map(bytes).join(" / ") : "",
    ], { "data-task": t.name, "data-state": t.up ? "up" : "down",
         title: t.up ? "" : t.error }));
  }
}

function renderSteps(steps) {
  const body = $("#steps tbody");
  body.replaceChildren();
  for (const s of steps.slice(0, 30)) {
    const failed = s.outcome !== "ok" && s.outcome !== "running";
    const tl = s.traced ? link("timeline", () => showTimeline(s.id), { class: "timeline-link" })
                        : "";
    body.appendChild(row([
      s.id, shortHandle(s.session), s.kind,
      badge(s.outcome, failed ? "down" : s.outcome === "ok" ? "up" : "running"),
      s.duration_ms === null ? "" : s.duration_ms.toFixed(2),
      s.node, s.error, tl,
    ], { "data-step": s.id, "data-outcome": s.outcome, class: failed ? "failed" : "" }));
  }
  const done = steps.filter((s) => s.duration_ms !== null);
  const series = (pred, name, color) => {
    const pts = done.filter(pred);
    return { x: pts.map((s) => new Date(s.started * 1000)), y: pts.map((s) => s.duration_ms),
             text: pts.map((s) => `step ${s.id} ${s.outcome} ${s.node || ""}`),
             name, mode: "markers", type: "scatter", marker: { color, size: 6 } };
  };
  Plotly.react("steps-chart", [
    series((s) => s.outcome === "ok", "ok", "#16a34a"),
    series((s) => s.outcome !== "ok", "failed", "#dc2626"),
  ], { margin: { t: 10, r: 10, b: 30, l: 50 }, yaxis: { title: "ms", rangemode: "tozero" },
       showlegend: true, legend: { orientation: "h" } },
  { displayModeBar: false, responsive: true });
}

function renderSessions(open, closed) {
  const body = $("#sessions tbody");
  body.replaceChildren();
  for (const s of open.concat(closed.slice(0, 5))) {
    const actions = el("span");
    actions.appendChild(link("detail", () => showSession(s.handle), { class: "detail-link" }));
    if (s.open) {
      actions.appendChild(document.createTextNode(" · "));
      actions.appendChild(link("graph", () => showGraph(s.handle), { class: "graph-link" }));
    }
    body.appendChild(row([
      s.handle, s.open ? "open" : "closed", s.nodes,
      s.top_ops.map(([op, n]) => `${op}×${n}`).join(" "),
      s.steps_ok, s.steps_failed, actions,
    ], { "data-session": s.handle }));
  }
}

// -- session detail ------------------------------------------------------------------------

async function showSession(handle) {
  state.session = handle;
  clearInterval(state.sessionTimer);
  state.sessionTimer = setInterval(() => refreshSession(), 2000);
  await refreshSession();
}

async function refreshSession() {
  if (!state.session) return;
  const r = await fetch(`/api/sessions/${state.session}`);
  if (!r.ok) return;
  const d = await r.json();
  $("#session-detail").hidden = false;
  $("#detail-handle").textContent = d.handle;
  const ops = Object.entries(d.ops).slice(0, 30);
  Plotly.react("ops-chart", [{
    type: "bar", x: ops.map((o) => o[0]), y: ops.map((o) => o[1]), marker: { color: "#2563eb" },
  }], { margin: { t: 20, r: 10, b: 90, l: 40 }, title: { text: "ops", font: { size: 12 } } },
  { displayModeBar: false, responsive: true });
  const body = $("#costs tbody");
  body.replaceChildren();
  for (const c of d.costs.slice(0, 20)) {
    body.appendChild(row([c.node, c.op, c.device, c.runs, c.mean_us.toFixed(1),
                          c.max_output_bytes]));
  }
}

// -- step timeline --------------------------------------------------------------------------

async function showTimeline(step) {
  const r = await fetch(`/api/steps/${step}/timeline`);
  if (!r.ok) { alert(await r.text()); return; }
  const t = await r.json();
  $("#timeline-section").hidden = false;
  $("#timeline-step").textContent = step;
  $("#trace-download").href = `/api/steps/${step}/trace.json`;
  const kernels = { name: "kernels", marker: { color: "#2563eb" } };
  const transfers = { name: "Send/Recv", marker: { color: "#d97706" } };
  for (const tr of [kernels, transfers]) {
    Object.assign(tr, { type: "bar", orientation: "h", x: [], y: [], base: [], hovertext: [],
                        hoverinfo: "text", opacity: 0.8 });
  }
  for (const lane of t.lanes) {
    for (const it of lane.items) {
      const tr = it.transfer ? transfers : kernels;
      tr.y.push(lane.device);
      tr.base.push(it.start_us / 1000);
      tr.x.push(it.duration_us / 1000);
      tr.hovertext.push(`${it.label}<br>${(it.duration_us / 1000).toFixed(3)} ms` +
                        (it.bytes ? `<br>${bytes(it.bytes)}` : ""));
    }
  }
  Plotly.react("timeline", [kernels, transfers], {
    barmode: "overlay", margin: { t: 10, r: 10, b: 40, l: 330 },
    xaxis: { title: "ms from the step's first kernel" }, yaxis: { automargin: true },
    legend: { orientation: "h" },
  }, { responsive: true });
  $("#timeline-section").scrollIntoView();
}

// -- placed graph ----------------------------------------------------------------------------

function webglAvailable() {
  try {
    const c = document.createElement("canvas");
    return !!(c.getContext("webgl") || c.getContext("experimental-webgl"));
  } catch (e) { return false; }
}

async function showGraph(handle, key) {
  const query = key ? `?key=${encodeURIComponent(key)}` : "";
  const r = await fetch(`/api/sessions/${handle}/graph${query}`);
  if (!r.ok) { alert(await r.text()); return; }
  const g = await r.json();
  $("#graph-section").hidden = false;
  $("#graph-key").textContent = shortHandle(handle);
  // Every client graph of the session the master keeps (feeds -> fetches), newest last.
  const detail = await (await fetch(`/api/sessions/${handle}`)).json();
  const select = $("#graph-select");
  select.replaceChildren();
  for (const gr of detail.graphs || []) {
    const opt = el("option", `${gr.key} (${gr.nodes} nodes, ${gr.transfers} transfers)`,
                   { value: gr.key });
    if (gr.key === g.key) opt.selected = true;
    select.appendChild(opt);
  }
  select.onchange = () => showGraph(handle, select.value);
  const devices = [...new Set(g.nodes.map((n) => n.device))].sort();
  const color = Object.fromEntries(devices.map((d, i) => [d, PALETTE[i % PALETTE.length]]));
  const big = g.nodes.length > 3000;
  const type = big && webglAvailable() ? "scattergl" : "scatter";
  const local = { x: [], y: [], name: "edges", line: { color: "#cbd5e1", width: 1 } };
  const cross = { x: [], y: [], name: "cross-device (Send/Recv)",
                  line: { color: "#dc2626", width: 1.5, dash: "dot" } };
  for (const [a, b, crosses] of g.edges) {
    const tr = crosses ? cross : local;
    const na = g.nodes[a], nb = g.nodes[b];
    tr.x.push(na.x, nb.x, null);
    tr.y.push(na.y, nb.y, null);
  }
  const traces = [local, cross].map((t) => Object.assign(t, { type, mode: "lines",
                                                             hoverinfo: "skip" }));
  for (const d of devices) {
    const ns = g.nodes.filter((n) => n.device === d);
    traces.push({
      type, mode: "markers", name: d, x: ns.map((n) => n.x), y: ns.map((n) => n.y),
      marker: { color: color[d], size: big ? 4 : 9 },
      hovertext: ns.map((n) => `${n.name} (${n.op})<br>${n.device}<br>${n.reason}: ${n.detail}`),
      hoverinfo: "text",
    });
  }
  Plotly.react("graph", traces, {
    margin: { t: 10, r: 10, b: 30, l: 30 }, hovermode: "closest",
    xaxis: { title: "depth", zeroline: false }, yaxis: { visible: false },
    legend: { orientation: "h" },
  }, { responsive: true });
  state.graph = g;
  renderExplain();
  const tb = $("#transfers tbody");
  tb.replaceChildren();
  for (const t of g.transfers.slice(0, 500)) tb.appendChild(row([t.tensor, t.from, t.to]));
  $("#graph-section").scrollIntoView();
}

function renderExplain() {
  const g = state.graph;
  if (!g) return;
  const q = $("#explain-filter").value.toLowerCase();
  const body = $("#explain tbody");
  body.replaceChildren();
  let shown = 0;
  for (const n of g.nodes) {
    const text = `${n.name} ${n.op} ${n.device} ${n.reason}`.toLowerCase();
    if (q && !text.includes(q)) continue;
    body.appendChild(row([n.name, n.op, n.device, n.reason, n.detail],
                         { "data-node": n.name, "data-reason": n.reason }));
    if (++shown >= 300) break;
  }
}

$("#explain-filter").addEventListener("input", renderExplain);
connect();
