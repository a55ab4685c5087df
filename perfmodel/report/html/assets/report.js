/* perfmodel report: draws the page from the JSON in #page-data. Python computed every
   number (perfmodel/report/html/data.py); this script only lays them out. Each section
   kind has one renderer, so the experiment page and a fleet index reuse them. */
(function () {
  "use strict";
  const PAGE = JSON.parse(document.getElementById("page-data").textContent);
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  const COMPONENT_COLORS = { cpu: "#4e79a7", gc: "#f28e2b", network: "#e15759",
    disk: "#76b7b2", scheduling: "#59a14f", unattributed: "#bab0ac", memory: "#b07aa1" };
  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  const pending = [];
  const listeners = [];
  const stageIndex = {};

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const kid of kids) if (kid !== null && kid !== undefined) node.append(kid);
    return node;
  }
  const SVG_NS = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    return node;
  }
  function fmtS(x) { return x === null || x === undefined ? "n/a" : (x >= 100 ? x.toFixed(0) : x.toFixed(x >= 10 ? 1 : 2)) + " s"; }
  function pct(x) { return x === null || x === undefined ? "n/a" : (100 * x).toFixed(0) + "%"; }
  function fmtBytes(n) {
    let v = n; for (const u of ["B", "KiB", "MiB", "GiB", "TiB"]) {
      if (v < 1024 || u === "TiB") return u === "B" ? v + " B" : v.toFixed(1) + " " + u;
      v /= 1024;
    }
  }
  function stageColor(id) { return PALETTE[id % PALETTE.length]; }
  function plot(div, traces, layout) {
    const base = { margin: { l: 60, r: 20, t: 30, b: 40 }, font: { size: 11 },
      paper_bgcolor: "#fff", plot_bgcolor: "#fff" };
    const done = Plotly.newPlot(div, traces, Object.assign(base, layout), PLOT_CONFIG);
    pending.push(done);
    return done;
  }
  function selectStage(key) { for (const f of listeners) f(key); }
  function onStage(f) { listeners.push(f); }

  const RENDER = {};

  RENDER.cards = function (body, data) {
    const grid = el("div", { class: "cards" });
    for (const c of data.cards) {
      grid.append(el("div", { class: "card", "data-key": c.key },
        el("div", { class: "label", text: c.label }),
        el("div", { class: "value", text: String(c.value) }),
        c.detail ? el("div", { class: "detail", text: c.detail }) : null));
    }
    body.append(grid);
  };

  RENDER.timeline = function (body, t) {
    const info = el("p", { class: "note" });
    info.textContent = `${t.tasks} task attempts on ${t.lanes.length} lane(s)` +
      (t.merged ? `; downsampled to ${t.bars.lane.length} bars (adjacent tasks of one stage ` +
        "in one lane merged below a pixel: hover says how many)" : "") +
      (t.gaps.length ? `; ${t.gaps.length} driver-only gap(s) shaded` : "");
    body.append(info);
    const div = el("div", { class: "plot", id: "timeline-plot" });
    body.append(div);
    const b = t.bars;
    const n = b.lane.length;
    const base = new Array(n), width = new Array(n), colors = new Array(n),
      lines = new Array(n), text = new Array(n), keys = new Array(n);
    for (let i = 0; i < n; i++) {
      base[i] = b.start[i];
      width[i] = Math.max(b.end[i] - b.start[i], 1e-3);
      colors[i] = stageColor(b.stage[i]);
      lines[i] = b.failed[i] ? "#d1342f" : colors[i];
      keys[i] = b.stage[i] + "." + b.attempt[i];
      text[i] = (b.stages[i] > 1 ? `${b.stages[i]} stages, mostly ${keys[i]}` : `stage ${keys[i]}`) +
        `<br>${t.lanes[b.lane[i]]}<br>` +
        (b.tasks[i] > 1 ? `${b.tasks[i]} tasks merged` : "1 task") +
        (b.failed[i] ? ` (${b.failed[i]} not successful)` : "") +
        `<br>${b.start[i].toFixed(2)}–${b.end[i].toFixed(2)} s`;
    }
    const traces = [{
      type: "bar", orientation: "h", y: b.lane, x: width, base: base, width: 0.85,
      marker: { color: colors, line: { color: lines, width: 1 } },
      hovertext: text, hoverinfo: "text", customdata: keys, name: "tasks",
    }];
    const added = t.executors.filter((e) => e.added_s !== null && e.added_s >= 0);
    const removed = t.executors.filter((e) => e.removed_s !== null);
    if (added.length) traces.push({ type: "scatter", mode: "markers", name: "executor added",
      x: added.map((e) => e.added_s), y: added.map((e) => e.lane),
      marker: { symbol: "triangle-right", size: 9, color: "#2a9d3a" },
      hovertext: added.map((e) => `executor ${e.id} added (${e.host})`), hoverinfo: "text" });
    if (removed.length) traces.push({ type: "scatter", mode: "markers", name: "executor removed",
      x: removed.map((e) => e.removed_s), y: removed.map((e) => e.lane),
      marker: { symbol: "x", size: 9, color: "#d1342f" },
      hovertext: removed.map((e) => `executor ${e.id} removed: ${e.reason}`), hoverinfo: "text" });
    const shapes = t.gaps.map((g) => ({ type: "rect", xref: "x", yref: "paper", x0: g[0], x1: g[1],
      y0: 0, y1: 1, fillcolor: "#9aa3b5", opacity: 0.22, line: { width: 0 }, layer: "below" }));
    const lanes = Math.max(t.lanes.length, 1);
    const ticks = t.executors.filter((e) => e.lane < lanes);
    const drawn = plot(div, traces, {
      height: Math.max(260, Math.min(40 + lanes * 16, 900)),
      barmode: "overlay", showlegend: false, shapes: shapes, hovermode: "closest",
      margin: { l: 110, r: 20, t: 10, b: 40 },
      xaxis: { title: { text: "seconds since application start" }, range: [0, t.span_s], zeroline: false },
      yaxis: { autorange: "reversed", tickvals: ticks.map((e) => e.lane),
        ticktext: ticks.map((e) => (e.id === "driver" ? "driver" : "executor " + e.id)),
        range: [lanes - 0.5, -0.5], fixedrange: false },
    });
    drawn.then(() => {
      div.on("plotly_click", (ev) => {
        const p = ev.points && ev.points[0];
        if (p && p.customdata) selectStage(p.customdata);
      });
    });
  };

  RENDER.dag = function (body, g) {
    if (!g.nodes.length) { body.append(el("p", { class: "muted", text: "No stage ran." })); return; }
    body.append(el("p", { class: "note", text: "Columns: stages that ran at the same time; left to right: the order they ran in." +
      (g.truncated ? ` Showing ${g.nodes.length} stages: the critical path, the stages that matter and the longest.` : "") }));
    const wrap = el("div", { class: "dag-wrap" });
    body.append(wrap);
    const boxW = 104, pitch = 132, laneH = 26, top = 14, left = 8;
    const width = left * 2 + g.columns * pitch;
    const height = top + g.rows * laneH + 14;
    const root = svg("svg", { width: width, height: height, id: "dag-svg", viewBox: `0 0 ${width} ${height}` });
    const defs = svg("defs");
    for (const [id, color] of [["arrow", "#9aa3b5"], ["arrow-critical", "#d1342f"]]) {
      const m = svg("marker", { id: id, viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 6, markerHeight: 6, orient: "auto" });
      m.append(svg("path", { d: "M0,0 L8,4 L0,8 z", fill: color }));
      defs.append(m);
    }
    root.append(defs);
    const pos = {};
    for (const n of g.nodes) {
      pos[n.id] = { x: left + n.column * pitch, w: boxW, y: top + n.row * laneH, n: n };
    }
    const onPath = {};
    g.critical.forEach((s, i) => { onPath[s] = i; });
    for (const [a, b] of g.edges) {
      const p = pos[a], c = pos[b];
      const x1 = p.x + p.w, y1 = p.y + 9, x2 = c.x, y2 = c.y + 9;
      const mid = (x1 + x2) / 2;
      const crit = a in onPath && b in onPath && onPath[b] === onPath[a] + 1;
      root.append(svg("path", { class: "dag-edge" + (crit ? " critical" : ""),
        d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
        "marker-end": crit ? "url(#arrow-critical)" : "url(#arrow)" }));
    }
    const linked = new Set(g.edges.map(([a, b]) => a + ">" + b));
    for (let i = 1; i < g.critical.length; i++) {
      const a = g.critical[i - 1], b = g.critical[i];
      const p = pos[a], c = pos[b];
      if (!p || !c || linked.has(a + ">" + b)) continue;
      // Consecutive on the path without a shuffle between them: the driver sequenced them.
      root.append(svg("path", { class: "dag-edge critical", "stroke-dasharray": "4 3",
        d: `M${p.x + p.w},${p.y + 9} L${c.x},${c.y + 9}`, "marker-end": "url(#arrow-critical)" }));
    }
    const boxes = {};
    for (const id of Object.keys(pos)) {
      const { x, w, y, n } = pos[id];
      const cls = "dag-node" + (n.critical ? " critical" : "") + (n.important ? " important" : "");
      const gNode = svg("g", { class: cls, "data-stage": n.id, "data-key": n.key, transform: `translate(${x},${y})` });
      const rect = svg("rect", { width: w, height: 18, rx: 3, fill: stageColor(n.id), "fill-opacity": n.status === "COMPLETE" ? 0.45 : 0.2 });
      const title = svg("title");
      title.textContent = `stage ${n.id} (${n.status}): ${n.label}\nran ${n.x0.toFixed(2)}–${n.x1.toFixed(2)} s (${(n.x1 - n.x0).toFixed(2)} s)`;
      rect.append(title);
      gNode.append(rect);
      if (w > 28) {
        const label = svg("text", { x: 3, y: 13 });
        const chars = Math.floor((w - 6) / 5.6);
        const full = `${n.id} ${n.label}`;
        label.textContent = full.length > chars ? full.slice(0, Math.max(chars - 1, 1)) + "…" : full;
        gNode.append(label);
      }
      gNode.addEventListener("click", () => selectStage(n.key));
      boxes[n.key] = gNode;
      root.append(gNode);
    }
    wrap.append(root);
    onStage((key) => {
      for (const [k, node] of Object.entries(boxes)) node.classList.toggle("selected", k === key);
    });
  };

  function stackedShares(div, rows, title) {
    const comps = Object.keys(COMPONENT_COLORS);
    const withCode = rows.some((s) => Object.keys(s.code_vector || {}).length);
    const y = rows.map((s) => "stage " + s.key);
    const traces = [];
    for (const c of comps) {
      if (rows.some((s) => (s.shares[c] || 0) > 0)) traces.push({
        type: "bar", orientation: "h", name: c, y: y, x: rows.map((s) => s.shares[c] || 0),
        marker: { color: COMPONENT_COLORS[c] }, legendgroup: c, customdata: rows.map((s) => s.key),
        hovertext: rows.map((s) => `${c}: ${pct(s.shares[c] || 0)} of ${fmtS(s.task_time_s)} task time`),
        hoverinfo: "text", xaxis: "x", yaxis: "y" });
    }
    if (withCode) for (const c of comps) {
      if (rows.some((s) => (s.code_vector[c] || 0) > 0)) traces.push({
        type: "bar", orientation: "h", name: c + " (code)", y: y,
        showlegend: !rows.some((s) => (s.shares[c] || 0) > 0),
        x: rows.map((s) => (s.code_vector || {})[c] || 0), legendgroup: c,
        marker: { color: COMPONENT_COLORS[c] || "#888", pattern: { shape: "/" } },
        customdata: rows.map((s) => s.key),
        hovertext: rows.map((s) => `code-inferred ${c}: ${pct((s.code_vector || {})[c] || 0)}`),
        hoverinfo: "text", xaxis: "x2", yaxis: "y" });
    }
    const layout = { barmode: "stack", height: Math.max(220, 60 + rows.length * 20),
      margin: { l: 80, r: 20, t: 40, b: 30 }, legend: { orientation: "h", y: -0.08 },
      yaxis: { autorange: "reversed" },
      xaxis: { domain: withCode ? [0, 0.48] : [0, 1], tickformat: ".0%", range: [0, 1],
        title: { text: "measured (share of task time)" }, side: "top" } };
    if (withCode) layout.xaxis2 = { domain: [0.52, 1], tickformat: ".0%", range: [0, 1],
      title: { text: "code-inferred vector (bundle samples)" }, side: "top" };
    plot(div, traces, layout);
  }

  RENDER.stages = function (body, data) {
    const stages = data.stages;
    for (const s of stages) stageIndex[s.key] = s;
    if (!stages.length) { body.append(el("p", { class: "muted", text: "No stages in this log." })); return; }
    const ranked = stages.filter((s) => s.task_time_s > 0).sort((a, b) => b.duration_s - a.duration_s).slice(0, 25);
    if (ranked.length) {
      body.append(el("p", { class: "note", text: `Where task time went in the ${ranked.length} longest stage(s)` +
        (ranked.some((s) => Object.keys(s.code_vector || {}).length) ? ", beside the resource vector inferred from the code each ran." : ".") }));
      const div = el("div", { class: "plot", id: "stage-shares" });
      body.append(div);
      stackedShares(div, ranked);
    }
    if (data.total > stages.length) body.append(el("p", { class: "note", text: `${stages.length} of ${data.total} stage attempts are on this page: the critical path, the stages that matter and the longest.` }));
    const row = el("div", { class: "row" });
    const tableWrap = el("div", { class: "side scroll" });
    const detail = el("div", { class: "grow detail", id: "stage-detail" });
    row.append(tableWrap, detail);
    body.append(row);
    const table = el("table", { class: "data", id: "stage-table" });
    table.append(el("tr", {}, el("th", { text: "stage" }), el("th", { text: "name" }),
      el("th", { class: "num", text: "duration" }), el("th", { class: "num", text: "tasks" }),
      el("th", { class: "num", text: "skew" })));
    const rowsByKey = {};
    const order = stages.slice().sort((a, b) => b.duration_s - a.duration_s).slice(0, 400);
    for (const s of order) {
      const tr = el("tr", { class: "clickable", "data-key": s.key, onclick: () => selectStage(s.key) },
        el("td", { text: s.key + (s.critical ? " ★" : "") }), el("td", { text: s.short.length > 32 ? s.short.slice(0, 31) + "…" : s.short }),
        el("td", { class: "num", text: fmtS(s.duration_s) }), el("td", { class: "num", text: String(s.tasks) }),
        el("td", { class: "num", text: s.skew === null ? "" : s.skew.toFixed(1) + "×" }));
      rowsByKey[s.key] = tr;
      table.append(tr);
    }
    tableWrap.append(table);
    onStage((key) => {
      for (const [k, tr] of Object.entries(rowsByKey)) tr.classList.toggle("selected", k === key);
      showStage(detail, stageIndex[key]);
    });
  };

  function showStage(detail, s) {
    detail.replaceChildren();
    if (!s) { detail.append(el("p", { class: "muted", text: "No detail for this stage." })); return; }
    detail.dataset.stage = s.key;
    detail.append(el("h3", { text: `Stage ${s.key}: ${s.short}` + (s.critical ? " (critical path)" : "") }));
    detail.append(el("p", { text: s.summary }));
    const kv = el("div", { class: "kv" });
    const add = (k, v) => kv.append(el("div", {}, el("b", { text: k + ": " }), v));
    add("status", s.status); add("jobs", s.jobs.join(", ") || "-");
    add("duration", fmtS(s.duration_s)); add("task time", fmtS(s.task_time_s));
    add("tasks", `${s.tasks} (${s.failed} not successful)`);
    add("median / max task", `${fmtS(s.median_task_s)} / ${fmtS(s.max_task_s)}`);
    add("stragglers", String(s.stragglers)); add("share of run", pct(s.share_of_app));
    for (const [k, v] of Object.entries(s.bytes)) add(k, fmtBytes(v));
    detail.append(kv);
    for (const text of s.disagreements || []) detail.append(el("p", { class: "warn", text: text }));
    const plots = el("div", { class: "row" });
    detail.append(plots);
    if (s.histogram && s.histogram.counts.length) {
      const div = el("div", { class: "grow plot", id: "stage-hist" });
      plots.append(div);
      const e = s.histogram.edges;
      plot(div, [{ type: "bar", x: e.slice(0, -1).map((x, i) => (x + e[i + 1]) / 2),
        y: s.histogram.counts, width: e.length > 1 ? e[1] - e[0] : 1, marker: { color: stageColor(s.id) },
        hovertemplate: "%{y} task(s) around %{x:.2f} s<extra></extra>" }],
      { height: 240, title: { text: "task durations (successful tasks)", font: { size: 12 } },
        xaxis: { title: { text: "seconds" } }, yaxis: { title: { text: "tasks" } } });
    }
    const bytes = Object.entries(s.bytes);
    if (bytes.some(([, v]) => v > 0)) {
      const div = el("div", { class: "grow plot", id: "stage-bytes" });
      plots.append(div);
      plot(div, [{ type: "bar", x: bytes.map(([k]) => k), y: bytes.map(([, v]) => v),
        marker: { color: ["#4e79a7", "#59a14f", "#e15759", "#f28e2b", "#b07aa1", "#d1342f"] },
        hovertext: bytes.map(([k, v]) => `${k}: ${fmtBytes(v)}`), hoverinfo: "text" }],
      { height: 240, title: { text: "bytes: input, output, shuffle, spill", font: { size: 12 } },
        yaxis: { title: { text: "bytes" } } });
    }
    if (s.top_functions && s.top_functions.length) {
      detail.append(el("h3", { text: "Top functions (stack samples, self time)" }));
      const t = el("table", { class: "data" });
      t.append(el("tr", {}, el("th", { text: "function" }), el("th", { class: "num", text: "self" }), el("th", { class: "num", text: "share" })));
      for (const f of s.top_functions) t.append(el("tr", {}, el("td", { text: f.function }),
        el("td", { class: "num", text: (f.self_ms / 1000).toFixed(2) + " s" }), el("td", { class: "num", text: pct(f.self_share) })));
      detail.append(t);
    }
  }

  function frameColor(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    const python = /\.py\)?$/.test(name) || name.includes(".py");
    const hue = python ? 45 + (h % 20) : 5 + (h % 30);
    return `hsl(${hue}, ${python ? 75 : 70}%, ${60 + (h % 15)}%)`;
  }

  function drawFlame(holder, tree, onZoom) {
    const width = Math.max(holder.clientWidth || 1100, 600) - 2;
    const rowH = 17;
    let depth = 0;
    (function measure(n, d) { depth = Math.max(depth, d); for (const c of n.c) measure(c, d + 1); })(tree, 1);
    const root = svg("svg", { width: width, height: depth * rowH + 2, class: "flame-svg" });
    const total = tree.v || 1;
    (function draw(n, x, d) {
      const w = (n.v / total) * width;
      if (w < 0.5) return;
      const g = svg("g", { class: "flame-node", transform: `translate(${x},${d * rowH})` });
      const rect = svg("rect", { width: Math.max(w, 0.5), height: rowH - 1, fill: d === 0 ? "#c9ced8" : frameColor(n.n) });
      const title = svg("title");
      title.textContent = `${n.n}\n${n.v} samples (${pct(n.v / total)})`;
      rect.append(title);
      g.append(rect);
      if (w > 40) {
        const text = svg("text", { x: 3, y: 12 });
        const chars = Math.floor((w - 6) / 6);
        text.textContent = n.n.length > chars ? n.n.slice(0, Math.max(chars - 1, 1)) + "…" : n.n;
        g.append(text);
      }
      g.addEventListener("click", () => onZoom(n));
      root.append(g);
      let cx = x;
      for (const c of n.c) { draw(c, cx, d + 1); cx += (c.v / total) * width; }
    })(tree, 0, 0);
    holder.replaceChildren(root);
  }

  RENDER.flame = function (body, f) {
    const keys = Object.keys(f.stages);
    const bar = el("div", { class: "row" });
    const select = el("select", { id: "flame-stage" });
    for (const k of keys) select.append(el("option", { value: k, text: "stage " + k + (stageIndex[k] ? ": " + stageIndex[k].short : "") }));
    const reset = el("button", { text: "reset zoom" });
    bar.append(el("label", {}, "Stage ", select), reset);
    if (f.speedscope) {
      const blob = new Blob([JSON.stringify(f.speedscope)], { type: "application/json" });
      bar.append(el("a", { class: "button", href: URL.createObjectURL(blob), download: "perfmodel.speedscope.json",
        text: "download speedscope JSON", id: "speedscope-link" }));
    }
    bar.append(el("span", { class: "muted" }, "Open in speedscope, or write the full files with ", el("code", { text: f.command }),
      ` (→ ${f.files}).`));
    body.append(bar);
    body.append(el("p", { class: "note", text: "Root at the top; width is the share of the stage's samples (JVM frames red-orange, Python yellow). Click a frame to zoom." }));
    const holder = el("div", { class: "flame-wrap", id: "flame-graph" });
    body.append(holder);
    const show = (key) => {
      const tree = f.stages[key];
      if (!tree) return;
      select.value = key;
      const zoom = (n) => drawFlame(holder, n, zoom);
      drawFlame(holder, tree, zoom);
    };
    select.addEventListener("change", () => show(select.value));
    reset.addEventListener("click", () => show(select.value));
    onStage((key) => { if (f.stages[key]) show(key); });
    show(keys[0]);
  };

  RENDER.whatif = function (body, w) {
    const row = el("div", { class: "row" });
    const plots = el("div", { class: "grow" });
    const side = el("div", { class: "side" });
    row.append(plots, side);
    body.append(row);
    if (w.error) plots.append(el("p", { class: "warn", text: w.error }));
    w.curves.forEach((c, i) => {
      const div = el("div", { class: "plot", id: "whatif-" + c.axis });
      plots.append(div);
      plot(div, [
        { type: "scatter", mode: "lines+markers", name: "predicted", x: c.x, y: c.predicted_s,
          text: c.labels, hovertemplate: `${c.axis}=%{text}: %{y:.1f} s<extra>predicted</extra>` },
        { type: "scatter", mode: "markers", name: "observed", x: [c.observed.x], y: [c.observed.y],
          marker: { symbol: "star", size: 14, color: "#d1342f" },
          hovertemplate: "observed run: %{y:.1f} s<extra></extra>" },
        { type: "scatter", mode: "markers", name: "baseline replay", x: [c.observed.x], y: [c.observed.replay],
          marker: { symbol: "circle-open", size: 11, color: "#1d2330" },
          hovertemplate: "replay of the observed configuration: %{y:.1f} s<extra></extra>" },
      ], { height: 300, title: { text: c.title, font: { size: 13 } },
        xaxis: { title: { text: c.x_label }, tickvals: c.x, ticktext: c.x.map(String),
          type: c.x.length > 2 && c.x[c.x.length - 1] / c.x[0] >= 8 ? "log" : "linear" },
        yaxis: { title: { text: "runtime (s)" }, rangemode: "tozero" }, legend: { orientation: "h", y: -0.25 } });
    });
    side.append(el("h3", { text: "Advice" }));
    side.append(el("p", { class: "muted", text: (w.bottleneck ? `Bottleneck overall: ${w.bottleneck}. ` : "") +
      (w.model_error !== null ? `The model replays the observed run within ${pct(Math.abs(w.model_error))}.` : "") +
      (w.intervals ? "" : " Prediction intervals: not computed yet.") }));
    const ul = el("ul", { class: "findings", id: "advice" });
    for (const a of w.advice) ul.append(el("li", { text: a.charAt(0).toUpperCase() + a.slice(1) }));
    if (!w.advice.length) ul.append(el("li", { class: "muted", text: "No advice for this log." }));
    side.append(ul);
  };

  RENDER.list = function (body, data) {
    const ul = el("ul", { class: "findings", id: body.parentNode.id + "-items" });
    for (const item of data.items) ul.append(el("li", { text: item }));
    body.append(ul);
    for (const [label, items, cls] of [["Warnings", data.warnings || [], "warn"], ["Notes", data.notes || [], "muted"]]) {
      if (!items.length) continue;
      body.append(el("h3", { text: label }));
      const u = el("ul", { class: cls });
      for (const w of items) u.append(el("li", { text: w }));
      body.append(u);
    }
  };

  RENDER.quality = function (body, q) {
    body.append(el("p", { class: "warn", id: "quality-headline",
      text: (q.headline || `${q.problems_total} problem(s) met while reading the log`) +
        (q.affects_answer ? " (this damage can change the answers below)" : "") }));
    if (Object.keys(q.counts).length) body.append(qualityTable(q));
    if (q.problems.length) {
      body.append(el("h3", { text: `Problems (${q.problems_total})` }));
      const ul = el("ul", { class: "warn" });
      for (const p of q.problems) ul.append(el("li", { text: `${p.file}${p.line ? ":" + p.line : ""}: ${p.message}` }));
      body.append(ul);
    }
  };

  function qualityTable(q) {
    const t = el("table", { class: "data", id: "quality-table" });
    t.append(el("tr", {}, el("th", { text: "damage" }), el("th", { class: "num", text: "count" }),
      el("th", { text: "examples" })));
    for (const [k, v] of Object.entries(q.counts)) {
      t.append(el("tr", { "data-key": k }, el("td", { text: k.replace(/_/g, " ") }),
        el("td", { class: "num", text: String(v) }),
        el("td", { class: "muted", text: (q.examples[k] || []).slice(0, 3).join(" · ") })));
    }
    return t;
  }

  RENDER.table = function (body, t) {
    const wrap = el("div", { class: "scroll" });
    const table = el("table", { class: "data", id: body.parentNode.id + "-table" });
    table.append(el("tr", {}, ...t.columns.map((c, i) => el("th", { class: t.numeric && t.numeric[i] ? "num" : null, text: c }))));
    for (const r of t.rows) table.append(el("tr", {}, ...r.map((v, i) => {
      const cell = el("td", { class: t.numeric && t.numeric[i] ? "num" : null });
      if (v && typeof v === "object" && v.href) cell.append(el("a", { href: v.href, text: v.text }));
      else cell.textContent = v === null ? "" : String(v);
      return cell;
    })));
    wrap.append(table);
    body.append(wrap);
  };

  RENDER.scatter = function (body, s) {
    const div = el("div", { class: "plot", id: body.parentNode.id + "-plot" });
    body.append(div);
    const all = s.series.flatMap((p) => p.x.concat(p.y)).filter((v) => v !== null);
    const hi = all.length ? Math.max(...all) * 1.08 : 1;
    const traces = s.series.map((p) => ({ type: "scatter", mode: "markers", name: p.name, x: p.x, y: p.y,
      text: p.labels, hovertemplate: `%{text}<br>${s.x_label}: %{x:.1f}<br>${s.y_label}: %{y:.1f}<extra>${p.name}</extra>`,
      marker: { size: 10 } }));
    if (s.diagonal) traces.push({ type: "scatter", mode: "lines", name: "y = x", x: [0, hi], y: [0, hi],
      line: { dash: "dot", color: "#9aa3b5" }, hoverinfo: "skip" });
    plot(div, traces, { height: 420, xaxis: { title: { text: s.x_label }, range: [0, hi] },
      yaxis: { title: { text: s.y_label }, range: [0, hi] }, legend: { orientation: "h", y: -0.2 } });
  };

  function main() {
    document.title = "perfmodel · " + PAGE.title;
    const header = el("header", {}, el("h1", { id: "page-title", text: PAGE.title }),
      el("div", { class: "subtitle", text: PAGE.subtitle + ` · perfmodel ${PAGE.version} · ${PAGE.generated}` }));
    const nav = el("nav", {});
    const mainEl = el("main", {});
    document.body.append(header, nav, mainEl);
    for (const sec of PAGE.sections) {
      nav.append(el("a", { href: "#" + sec.id, text: sec.title }));
      const node = el("section", { class: "report-section", id: sec.id, "data-kind": sec.kind },
        el("h2", { text: sec.title }), sec.note ? el("p", { class: "note", text: sec.note }) : null);
      const body = el("div", { class: "body" });
      node.append(body);
      mainEl.append(node);
      RENDER[sec.kind](body, sec.data);
    }
    const stages = PAGE.sections.find((s) => s.kind === "stages");
    if (stages && stages.data.stages.length) {
      // Open on the longest stage of the critical path (else the longest stage).
      const ranked = stages.data.stages.filter((s) => s.detailed).sort((a, b) => b.duration_s - a.duration_s);
      const first = ranked.find((s) => s.critical) || ranked[0] || stages.data.stages[0];
      selectStage(first.key);
    }
    Promise.all(pending).then(() => { document.body.dataset.ready = "1"; });
  }
  main();
})();
