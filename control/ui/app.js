// The operator's page: a multiviewer. At the top the Preview and Program
// monitors of the first Program bus (Program its own picture, Preview drawn
// here from its scene's sources, as the scene places them), with tally
// borders, the clock and the Program timecode; the transition bar (cut,
// fade, wipe, a duration in frames or seconds, TAKE, fade to black); the
// scenes as tiles (click: preview, double-click: take; on a touch screen
// a tap previews and a tap on the scene on preview takes it); a row for every
// other bus with what it may show (an AUX bus its routes); and the sources
// as tiles with their tally, at a rate the operator sets; and the mixer:
// a fader, a mute and a meter per source on every bus that mixes sound.
// Every tile shows its age (how long ago its picture was drawn) and a
// placeholder with the reason when it has no picture. Keys: digits preview, Space cut, Enter
// take, C/M/W pick the transition, F fades to black and back.
//
// It reads GET /status once a second for the counters, follows GET
// /events for switches, tally, source errors and missed deadlines, reads
// GET /plan for the scenes' layers, and asks GET /snapshot/NAME?fps=N for
// each tile on screen while the page is visible (none for a tile nobody
// sees). Every change is a same-origin POST with a JSON body; with a token
// the page logs in once (POST /login) and the server keeps a session
// cookie.
"use strict";

const $ = (sel, el = document) => el.querySelector(sel);
// TOUCH: the page is on a touch screen (a phone, a tablet), whose taps
// have no double-click.
const TOUCH = matchMedia("(pointer: coarse)").matches;
const el = (tag, props = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const kid of kids) e.append(kid);
  return e;
};

const MONITOR_FPS = 25; // the Program monitor (the server's most)
const PREVIEW_FPS = 10; // the sources the Preview monitor draws
const BLACK = "black";  // the scene of no layers every Program bus may show

let op = null;        // the operator's view: {buses, tally, sources}
let status = null;    // the last GET /status
let scenesOf = {};    // scene address → its layers (GET /plan)
let srcW = {};        // source address → its width in pixels (GET /plan), for crops
let canvasW = 1920, canvasH = 1080;
let lastTicks = {};   // bus → [ticks, time] of the last poll
let fpsOf = {};       // bus → frames drawn per second between the last two polls
let beforeBlack = {}; // bus → the scene on air before it faded to black
let started = false;

async function api(method, path, body) {
  const opts = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.headers["Onair-Origin"] = "page"; // the as-run log's origin
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch(path, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { /* not JSON */ }
  if (!resp.ok) {
    const err = new Error((data && data.error) || resp.status + " " + resp.statusText);
    err.status = resp.status;
    throw err;
  }
  return data;
}

function log(msg, cls) {
  const li = el("li", { text: new Date().toLocaleTimeString() + "  " + msg });
  if (cls) li.className = cls;
  const ol = $("#log");
  ol.prepend(li);
  while (ol.children.length > 50) ol.lastChild.remove();
}

async function loadPlan() {
  try {
    const p = await api("GET", "/plan");
    scenesOf = {};
    for (const sc of p.scenes || []) scenesOf[sc.address] = sc.layers || [];
    for (const n of p.nodes || []) if (n.address.startsWith("source.") && n.size) srcW[n.address] = +n.size.split("x")[0];
    const [w, h] = (p.size || "1920x1080").split("x").map(Number);
    if (w > 0 && h > 0) { canvasW = w; canvasH = h; }
  } catch (e) {
    log("cannot read /plan: " + e.message + " (the Preview monitor stays dark)", "error");
  }
}

async function boot() {
  try {
    status = await api("GET", "/status");
  } catch (e) {
    if (e.status === 401) return showLogin();
    log("cannot read /status: " + e.message, "error");
    setTimeout(boot, 2000);
    return;
  }
  $("#login").hidden = true;
  $("#app").hidden = false;
  op = status.operator;
  await loadPlan();
  build();
  if (!started) {
    started = true;
    follow();
    setInterval(poll, 1000);
    requestAnimationFrame(clock);
    $("#show-sources").checked = localStorage.getItem("onair.sources") === "1";
    $("#show-sources").addEventListener("change", (e) => {
      localStorage.setItem("onair.sources", e.target.checked ? "1" : "0");
      build();
    });
    const fpsSel = $("#tile-fps");
    fpsSel.value = localStorage.getItem("onair.tile-fps") || "5";
    fpsSel.addEventListener("change", () => localStorage.setItem("onair.tile-fps", fpsSel.value));
    $("#kind").addEventListener("change", () => { $("#dur").disabled = $("#kind").value === "cut"; });
    $("#dur").disabled = $("#kind").value === "cut";
    $("#take").onclick = () => take($("#kind").value);
    $("#ftb").onclick = fadeToBlack;
    document.addEventListener("keydown", onKey);
  }
  render();
}

function showLogin() {
  $("#app").hidden = true;
  const f = $("#login");
  f.hidden = false;
  f.onsubmit = async (ev) => {
    ev.preventDefault();
    try {
      await api("POST", "/login", { token: $("#token").value });
      $("#token").value = "";
      boot();
    } catch (e) {
      $("#login-error").textContent = e.message;
    }
  };
}

// main is the Program bus the monitors, scene tiles and keys work on.
const main = () => op && op.buses.find((b) => b.kind === "program");
const realScenes = (b) => (b.scenes || []).filter((s) => s !== BLACK);

// Pictures: one watcher per bus or source shown, asking the server for
// its snapshot at a rate while anything on screen shows it.
const pics = {}; // name → {bmp, drawnAt (performance.now() of the picture), error, users: Set, fps}
function watch(name, user, fps) {
  let p = pics[name];
  if (!p) {
    p = pics[name] = { bmp: null, drawnAt: 0, error: "", users: new Map(), timer: 0, busy: false, loads: 0 };
  }
  p.users.set(user, fps);
  if (!p.busy && !p.timer) fetchPic(name, 0);
}
function unwatch(name, user) { if (pics[name]) pics[name].users.delete(user); }
function picFPS(p) {
  let f = 0;
  for (const [u, fps] of p.users) if (visible(u)) f = Math.max(f, typeof fps === "function" ? fps() : fps);
  return f;
}
// visible reports whether a tile is on screen (and the page is shown).
const seen = new WeakMap();
const io = new IntersectionObserver((es) => { for (const e of es) seen.set(e.target, e.isIntersecting); });
function visible(u) { return !document.hidden && u.isConnected && seen.get(u) !== false; }
function fetchPic(name, delay) {
  const p = pics[name];
  clearTimeout(p.timer);
  p.timer = setTimeout(async () => {
    p.timer = 0;
    const fps = picFPS(p);
    if (fps === 0) {
      if (p.users.size) p.timer = setTimeout(() => fetchPic(name, 0), 250); // off screen: look again later
      return;
    }
    const t0 = performance.now();
    p.busy = true;
    let next = 1000 / fps;
    try {
      const resp = await fetch("/snapshot/" + encodeURIComponent(name) + "?fps=" + fps, { credentials: "same-origin", cache: "no-store" });
      // The age is the server's when it answered: counted from the
      // answer's arrival, the picture's age takes in its transfer and
      // decode.
      const answered = performance.now();
      if (resp.ok) {
        const age = +resp.headers.get("Onair-Age-Ms") || 0;
        const bmp = await createImageBitmap(await resp.blob());
        if (p.bmp) p.bmp.close();
        p.bmp = bmp;
        p.drawnAt = answered - age;
        p.error = "";
        p.loads++;
      } else {
        let msg = resp.status + " " + resp.statusText;
        try { msg = (await resp.json()).error || msg; } catch (e) { /* not JSON */ }
        p.error = resp.status === 503 ? "waiting for the first picture" : msg;
        p.unused = resp.status === 404;
        next = resp.status === 404 ? 5000 : 500;
      }
    } catch (e) {
      p.error = "no answer: " + e.message;
      next = 1000;
    }
    p.busy = false;
    for (const [u] of p.users) if (u.isConnected) paint(u);
    fetchPic(name, Math.max(0, next - (performance.now() - t0)));
  }, delay);
}

// A tile: a canvas with a label, its tally tags and its age.
function tile(name, opts = {}) {
  const cv = el("canvas", { width: 320, height: 180 });
  const t = el("div", { class: "tile" + (opts.monitor ? " monitor" : ""), "data-tile": name }, cv,
    el("div", { class: "placeholder" }),
    el("div", { class: "label" }, el("span", { class: "name", text: opts.title || short(name) }), el("span", { class: "tags" }), el("span", { class: "age", text: "" })));
  t.paintFrom = opts.paint || ((ctx) => drawPic(ctx, name, 0, 0, cv.width, cv.height, "contain"));
  t.names = opts.names || (() => [name]);
  t.fps = opts.fps || (() => +$("#tile-fps").value);
  io.observe(t);
  return t;
}
// follow makes every tile watch what it draws; tiles gone let go.
let tiles = [];
function rewatch() {
  tiles = tiles.filter((t) => t.isConnected);
  for (const p of Object.values(pics)) for (const [u] of p.users) if (!u.isConnected) p.users.delete(u);
  for (const t of tiles) {
    const want = new Set(t.names());
    for (const [n, p] of Object.entries(pics)) if (p.users.has(t) && !want.has(n)) unwatch(n, t);
    for (const n of want) watch(n, t, t.fps);
  }
}
function drawPic(ctx, name, x, y, w, h, fit, crop, alpha) {
  const p = pics[name];
  if (!p || !p.bmp) return false;
  const b = p.bmp;
  let sx = 0, sy = 0, sw = b.width, sh = b.height;
  if (crop) { // crop is in source pixels; the snapshot is scaled down
    const k = b.width / (srcW[name] || b.width);
    [sx, sy, sw, sh] = crop.map((v) => v * k);
  }
  let dx = x, dy = y, dw = w, dh = h;
  if (fit === "contain" || fit === "cover") {
    const s = fit === "contain" ? Math.min(w / sw, h / sh) : Math.max(w / sw, h / sh);
    dw = sw * s; dh = sh * s; dx = x + (w - dw) / 2; dy = y + (h - dh) / 2;
  }
  ctx.save();
  ctx.beginPath(); ctx.rect(x, y, w, h); ctx.clip();
  ctx.globalAlpha = alpha === undefined ? 1 : alpha;
  ctx.drawImage(b, sx, sy, sw, sh, dx, dy, dw, dh);
  ctx.restore();
  return true;
}
// paint redraws a tile's canvas and its placeholder.
function paint(t) {
  const cv = $("canvas", t);
  const ctx = cv.getContext("2d");
  ctx.fillStyle = "#000";
  ctx.fillRect(0, 0, cv.width, cv.height);
  t.paintFrom(ctx, cv);
  const names = t.names();
  const ps = names.map((n) => pics[n]).filter(Boolean);
  const loaded = ps.some((p) => p.bmp);
  const ph = $(".placeholder", t);
  const err = ps.find((p) => p.error && !p.bmp);
  ph.textContent = names.length === 0 ? (t.emptyText || "") : err ? err.error : loaded ? "" : "waiting for the first picture";
  ph.hidden = ph.textContent === "";
  t.classList.toggle("unused", ps.length > 0 && ps.every((p) => p.unused));
  if (loaded) {
    t.dataset.loaded = "1";
    t.dataset.loads = ps.reduce((a, p) => a + p.loads, 0);
  }
}
// ageOf is how long ago a tile's oldest picture was drawn, in ms.
function ageOf(t) {
  let a = -1;
  for (const n of t.names()) {
    const p = pics[n];
    if (p && p.bmp) a = Math.max(a, performance.now() - p.drawnAt);
  }
  return a;
}

function build() {
  tiles.forEach((t) => io.unobserve(t));
  tiles = [];
  op.buses.sort((a, b) => (a.kind === b.kind ? a.address.localeCompare(b.address) : a.kind === "program" ? -1 : 1));
  const m = main();
  const monitors = $("#monitors");
  monitors.replaceChildren();
  const scenesBox = $("#scenes");
  scenesBox.replaceChildren();
  $("#bar").hidden = !m;
  if (m) {
    const pvw = tile("preview", {
      monitor: true, title: "PREVIEW", fps: () => PREVIEW_FPS,
      names: () => (scenesOf[m.preview] || []).map((l) => l.source),
      paint: (ctx, cv) => drawScene(ctx, cv, m.preview),
    });
    pvw.dataset.monitor = "preview";
    pvw.emptyText = "no scene on preview: press a scene, or its number";
    const pgm = tile(m.address, { monitor: true, title: "PROGRAM " + short(m.address), fps: () => MONITOR_FPS });
    pgm.dataset.monitor = "program";
    for (const t of [pvw, pgm]) { $("canvas", t).width = 640; $("canvas", t).height = 360; }
    monitors.append(pvw, pgm);
    tiles.push(pvw, pgm);
    realScenes(m).forEach((s, i) => {
      const how = TOUCH ? "tap: preview; tap again: take" : "click: preview; double-click: take";
      const st = el("button", { class: "scene-tile", "data-scene": m.address + "|" + s, title: how + (i < 9 ? "; key " + (i + 1) : "") },
        el("span", { class: "key", text: i < 9 ? String(i + 1) : "" }), el("span", { class: "name", text: short(s) }));
      // A touch screen has no double-click: a tap on the scene already on
      // preview takes it.
      st.onclick = () => (TOUCH && st.classList.contains("pvw") ? take($("#kind").value) : preview(m.address, s));
      if (!TOUCH) st.ondblclick = () => { preview(m.address, s).then(() => take($("#kind").value)); };
      scenesBox.append(st);
    });
    $("#take").dataset.take = m.address;
  }

  const controls = $("#controls");
  controls.replaceChildren();
  for (const b of op.buses) {
    if (b === m) continue;
    const box = el("div", { class: "bus", "data-bus": b.address });
    const aux = b.kind !== "program";
    box.append(el("h2", {}, el("span", { text: short(b.address) }),
      el("span", { class: "badge " + (aux ? "aux" : "pgm"), text: aux ? "AUX" : "PGM" }),
      el("span", { class: "badge", "data-timing": b.address }),
      el("span", { class: "badge", "data-missed": b.address }),
      el("span", { class: "badge tc", "data-tc": b.address, title: "the timecode of the tick last drawn" })));
    const row = el("div", { class: "row" }, el("span", { class: "label", text: aux ? "shows" : "on air" }));
    const choices = realScenes(b);
    if (choices.length === 0) row.append(el("span", { class: "dim", text: (b.sources || []).map(short).join(" ") + " (no routes: list what it may show in the bus's routes)" }));
    for (const s of choices) {
      const btn = el("button", { class: "choice", text: short(s), title: "switch " + b.address + " to " + s + " with the transition", "data-choice": b.address + "|" + s });
      btn.onclick = () => sw(b.address, s);
      row.append(btn);
    }
    box.append(row);
    controls.append(box);
  }
  buildMixer();

  const wall = $("#wall");
  wall.replaceChildren();
  const names = op.buses.filter((b) => b !== m).map((b) => b.address);
  if ($("#show-sources").checked) names.push(...op.sources);
  for (const n of names) {
    const t = tile(n);
    wall.append(t);
    tiles.push(t);
  }
  rewatch();
  render();
}

// drawScene draws a scene on a monitor from its sources' pictures, as the
// scene places them (z order, fit, crop, opacity).
function drawScene(ctx, cv, scene) {
  const layers = (scenesOf[scene] || []).slice().sort((a, b) => (a.z || 0) - (b.z || 0));
  const kx = cv.width / canvasW, ky = cv.height / canvasH;
  for (const l of layers) {
    const [x, y, w, h] = l.rect || [0, 0, canvasW, canvasH];
    drawPic(ctx, l.source, x * kx, y * ky, w * kx, h * ky, l.fit, l.crop, l.opacity);
  }
}

function onKey(e) {
  // Keys typed into a field are the field's (a checkbox takes none).
  if (e.target.closest && e.target.closest("input:not([type=checkbox]), select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
  const m = main();
  if (!m) return;
  const k = e.key;
  if (k >= "1" && k <= "9") {
    const s = realScenes(m)[+k - 1];
    if (s) preview(m.address, s);
  } else if (k === " ") take("cut");
  else if (k === "Enter") take($("#kind").value);
  else if (k === "c" || k === "C") setKind("cut");
  else if (k === "m" || k === "M") setKind("fade");
  else if (k === "w" || k === "W") setKind("wipe");
  else if (k === "f" || k === "F") fadeToBlack();
  else return;
  e.preventDefault();
}
function setKind(k) { $("#kind").value = k; $("#dur").disabled = k === "cut"; }

function preview(bus, scene) {
  return api("POST", "/buses/" + enc(bus) + "/preview", { scene }).catch((e) => log(e.message, "error"));
}
function take(kind) {
  const m = main();
  if (!m) return;
  const body = { transition: kind };
  if (kind !== "cut") body.duration = $("#dur").value;
  api("POST", "/buses/" + enc(m.address) + "/take", body).catch((e) => log(e.message, "error"));
}
// fadeToBlack fades the Program bus to black, or back to the scene it left.
function fadeToBlack() {
  const m = main();
  if (!m) return;
  const d = $("#kind").value === "cut" ? "1s" : $("#dur").value;
  const black = (m.on_air || []).includes(BLACK) || m.next === BLACK;
  const to = black ? beforeBlack[m.address] || m.preview || realScenes(m)[0] : BLACK;
  if (!black) beforeBlack[m.address] = m.next || (m.on_air || [])[0];
  api("POST", "/buses/" + enc(m.address) + "/fade", { scene: to, duration: d }).catch((e) => log(e.message, "error"));
}
function sw(bus, scene) {
  const kind = $("#kind").value;
  const body = { scene };
  if (kind !== "cut") body.duration = $("#dur").value;
  api("POST", "/buses/" + enc(bus) + "/" + kind, body).catch((e) => log(e.message, "error"));
}

// render sets the tally borders, the buttons' states and the badges.
function render() {
  if (!op) return;
  const m = main();
  for (const b of op.buses) {
    const onAir = new Set(b.on_air || []);
    document.querySelectorAll('[data-scene^="' + CSS.escape(b.address) + '|"], [data-choice^="' + CSS.escape(b.address) + '|"]').forEach((btn) => {
      const s = (btn.dataset.scene || btn.dataset.choice).split("|")[1];
      btn.classList.toggle(b.kind === "program" ? "pgm" : "aux-on", onAir.has(s));
      btn.classList.toggle("pvw", s === b.preview);
    });
    const t = $('[data-tile="' + CSS.escape(b.address) + '"]');
    if (t) {
      t.classList.toggle("pgm", b.kind === "program");
      const tags = $(".tags", t);
      tags.replaceChildren(el("span", { class: "badge " + (b.kind === "program" ? "pgm" : "aux"), text: b.kind === "program" ? "PGM" : "AUX" }),
        el("span", { text: (b.on_air || []).map(short).join(" → ") || (b.sources || []).map(short).join(" ") }));
      if (b.missed_deadlines > 0) tags.append(el("span", { class: "badge warn", text: b.missed_deadlines + " missed" }));
    }
  }
  if (m) {
    const pvw = $('[data-monitor="preview"]');
    if (pvw) {
      pvw.classList.toggle("pvw", !!m.preview);
      $(".tags", pvw).replaceChildren(el("span", { text: m.preview ? short(m.preview) : "" }));
    }
    const black = (m.on_air || []).includes(BLACK);
    $("#ftb").classList.toggle("on", black);
    rewatch();
  }
  for (const s of op.sources) {
    const t = $('[data-tile="' + CSS.escape(s) + '"]');
    if (!t) continue;
    const tl = op.tally[s] || {};
    t.classList.toggle("pgm", !!tl.program);
    t.classList.toggle("pvw", !tl.program && !!tl.preview);
    const tags = $(".tags", t);
    tags.replaceChildren();
    if (tl.program) tags.append(el("span", { class: "badge pgm", text: "PGM" }));
    if (tl.preview) tags.append(el("span", { class: "badge pvw", text: "PVW" }));
    for (const a of tl.aux || []) tags.append(el("span", { class: "badge aux", text: short(a) }));
    const src = status && status.summary.sources.find((x) => x.address === s);
    let err = $(".error", t);
    if (src && src.last_error) {
      if (!err) t.append(err = el("div", { class: "error" }));
      err.textContent = src.last_error;
    } else if (err) err.remove();
  }
  if (status) {
    for (const x of [...status.summary.buses, ...status.summary.sources]) meter(x.address, x.audio);
    renderMixer();
  }
  if (status) {
    $("#show").textContent = status.show;
    $("#meta").textContent = status.backend + " backend · " + status.frame_rate + " fps · up " + status.uptime;
    for (const b of status.summary.buses) {
      const fps = fpsOf[b.address] !== undefined ? fpsOf[b.address].toFixed(1) : "…";
      const tb = $('[data-timing="' + CSS.escape(b.address) + '"]');
      if (tb) tb.textContent = fps + " fps · draw max " + b.timing.max_draw_ms.toFixed(1) + " ms";
      const mb = $('[data-missed="' + CSS.escape(b.address) + '"]');
      if (mb) {
        mb.textContent = b.missed_deadlines + " missed";
        mb.className = "badge" + (b.missed_deadlines > 0 ? " warn" : "");
      }
    }
  }
}

// meter draws a tile's loudness: a bar of momentary loudness from -60 to
// 0 LUFS, with the reading and the true peak beside it.
function meter(name, a) {
  const t = $('[data-tile="' + CSS.escape(name) + '"]');
  if (!t) return;
  let m = $(".meter", t);
  if (!a) { if (m) m.remove(); return; }
  if (!m) {
    t.append(m = el("div", { class: "meter" }, el("div", { class: "bar" }), el("span", { class: "lufs" })));
    const pgm = status.summary.buses.find((b) => b.kind === "program" && b.audio && b.audio.strips && b.audio.strips[name]);
    if (pgm) { // a source on a Program bus: its mute there
      const btn = el("button", { class: "mute", text: "MUTE", title: "mute " + name + " on " + pgm.address, "data-mute": name });
      btn.onclick = () => api("POST", "/buses/" + enc(pgm.address) + "/audio", { source: name, mute: !btn.classList.contains("on") })
        .then(poll).catch((e) => log(e.message, "error"));
      m.append(btn);
    }
  }
  const mb = $(".mute", m);
  if (mb) {
    const pgm = status.summary.buses.find((b) => b.kind === "program" && b.audio && b.audio.strips && b.audio.strips[name]);
    mb.classList.toggle("on", !!(pgm && pgm.audio.strips[name].mute));
  }
  const lufs = a.momentary_lufs;
  const pct = lufs === null ? 0 : Math.max(0, Math.min(100, (lufs + 60) * 100 / 60));
  $(".bar", m).style.width = pct + "%";
  m.classList.toggle("hot", a.true_peak_dbtp !== null && a.true_peak_dbtp > -1);
  $(".lufs", m).textContent = (lufs === null ? "silence" : "M " + lufs.toFixed(1) + " LUFS") +
    (a.true_peak_dbtp === null ? "" : " · TP " + a.true_peak_dbtp.toFixed(1));
}

async function poll() {
  try {
    status = await api("GET", "/status");
  } catch (e) {
    if (e.status === 401) return showLogin();
    return;
  }
  const now = performance.now();
  for (const b of status.summary.buses) {
    const prev = lastTicks[b.address];
    if (prev && now > prev[1]) fpsOf[b.address] = (b.ticks - prev[0]) * 1000 / (now - prev[1]);
    lastTicks[b.address] = [b.ticks, now];
  }
  if (status.timecode) {
    for (const [bus, tc] of Object.entries(status.timecode.buses || {})) if (tc) anchorTC(bus, tc);
  }
  // The stream is the fresher source of on-air state; the poll brings the
  // counters (and catches up if the stream was down).
  if (!streamUp) op = status.operator;
  render();
}

let streamUp = false;
function follow() {
  const es = new EventSource("/events");
  const live = $("#live");
  es.onopen = () => { streamUp = true; live.textContent = "live"; live.className = "badge on"; };
  es.onerror = () => {
    streamUp = false;
    live.textContent = "reconnecting";
    live.className = "badge off";
  };
  const on = (type, f) => es.addEventListener(type, (m) => {
    let e;
    try { e = JSON.parse(m.data); } catch (err) { return; }
    f(e.data || {}, e);
    render();
  });
  on("hello", (d) => { op = d.operator; build(); });
  on("tally", (d) => { op.tally = d.tally; });
  on("on_air", (d) => {
    const b = op.buses.find((x) => x.address === d.bus);
    if (b) b.on_air = d.on_air;
    if (d.timecode) anchorTC(d.bus, d.timecode);
    log(d.bus + " on air: " + d.on_air.join(" → ") + " (tick " + d.tick + (d.timecode ? ", " + d.timecode : "") + ")");
  });
  on("preview", (d) => {
    const b = op.buses.find((x) => x.address === d.bus);
    if (b) b.preview = d.preview;
  });
  on("switch", (d) => {
    const b = op.buses.find((x) => x.address === d.bus);
    if (b) b.next = d.scene;
    log(d.bus + ": " + d.transition + " to " + d.scene + (d.duration_ms ? " over " + d.duration_ms + " ms" : "") + (d.at ? " at " + d.at : ""));
  });
  on("missed_deadline", (d) => {
    const b = op.buses.find((x) => x.address === d.bus);
    if (b) b.missed_deadlines = d.missed_total;
    log(d.bus + " missed " + d.missed + " deadline(s) at tick " + d.tick + (d.timecode ? " (" + d.timecode + ")" : ""), "error");
  });
  on("source_error", (d) => log(d.source + ": " + d.error, "error"));
  on("source_ok", (d) => log(d.source + " delivers again"));
  on("lost", (d) => { log("missed " + d.events + " events; reloading the state"); streamUp = false; });
  // onair apply changed the show on air: a bus may offer new scenes.
  on("apply", (d) => {
    log("changed on air: " + (d.changed || []).join(", ") + (d.more ? " and " + d.more + " more" : ""));
    api("GET", "/status").then(async (st) => { status = st; op = st.operator; await loadPlan(); build(); }).catch((e) => log(e.message, "error"));
  });
}

// Timecode (SMPTE ST 12), as package timecode counts it: drop-frame at
// 30000/1001 and 60000/1001 (2 or 4 frame numbers skipped at each minute
// not divisible by ten), non-drop at every other rate. Each bus's
// timecode is anchored at its last tick drawn (an on_air event, or the
// status poll) and counted on at the show's rate between them.
let tcAt = {}; // bus → [frames from midnight, performance.now()]
function tcRate() {
  const [num, den] = ((status && status.frame_rate) || "30").split("/").map(Number);
  const d = den || 1;
  const nominal = Math.ceil(num / d);
  const drop = d === 1001 && (num === 30000 || num === 60000) ? nominal / 15 : 0;
  return { num, den: d, nominal, drop, day: 24 * 3600 * nominal - 1296 * drop };
}
function tcFrame(label) {
  const r = tcRate();
  const f = label.split(/[:;.,]/).map(Number);
  const mins = f[0] * 60 + f[1];
  return (mins * 60 + f[2]) * r.nominal + f[3] - r.drop * (mins - Math.floor(mins / 10));
}
function tcLabel(n) {
  const r = tcRate();
  n = ((Math.floor(n) % r.day) + r.day) % r.day;
  if (r.drop) {
    const per10 = 600 * r.nominal - 9 * r.drop, perMin = 60 * r.nominal - r.drop;
    const tens = Math.floor(n / per10), rem = n % per10;
    n += 9 * r.drop * tens + (rem >= r.drop ? r.drop * Math.floor((rem - r.drop) / perMin) : 0);
  }
  const two = (v) => String(v).padStart(2, "0");
  const s = Math.floor(n / r.nominal);
  return two(Math.floor(s / 3600)) + ":" + two(Math.floor(s / 60) % 60) + ":" + two(s % 60) + (r.drop ? ";" : ":") + two(n % r.nominal);
}
function anchorTC(bus, label) { tcAt[bus] = [tcFrame(label), performance.now()]; }
function busTC(bus, now) {
  const a = tcAt[bus];
  if (!a) return "";
  const r = tcRate();
  return tcLabel(a[0] + Math.min(now - a[1], 2000) * r.num / r.den / 1000);
}
function clock() {
  const now = performance.now();
  const d = new Date();
  $("#clock").textContent = d.toLocaleTimeString([], { hour12: false });
  if (op) {
    const pgm = main();
    if (pgm) $("#pgm-tc").textContent = busTC(pgm.address, now) || "--:--:--:--";
    for (const b of op.buses) {
      const e = $('[data-tc="' + CSS.escape(b.address) + '"]');
      if (e) e.textContent = busTC(b.address, now);
    }
  }
  for (const t of tiles) {
    const a = ageOf(t);
    const e = $(".age", t);
    e.textContent = a < 0 ? "" : a < 1000 ? Math.round(a) + " ms" : (a / 1000).toFixed(1) + " s";
    e.classList.toggle("old", a > 1000);
    t.dataset.age = a < 0 ? "" : Math.round(a);
    if (t.dataset.monitor === "preview") paint(t); // drawn from several pictures
  }
  requestAnimationFrame(clock);
}

// The mixer: for every bus that mixes sound, its master fader and meter,
// and a strip per source on it (a fader in dB over the range /status
// gives, a MUTE, the source's own meter). A fader sends its level when it
// is let go (POST /buses/BUS/audio); until /status reads the level back
// (or the server refuses it) the poll does not move the fader under the
// operator's hand.
const mixPending = {}; // "bus|source" or "bus|" (the master) → the level sent, not yet read back
function buildMixer() {
  const box = $("#mixer");
  box.replaceChildren();
  if (!status) return;
  for (const b of status.summary.buses) {
    const a = b.audio;
    if (!a || !a.strips) continue;
    const [lo, hi] = a.fader_range_db || [-120, 12];
    const strips = Object.keys(a.strips).sort((x, y) => op.sources.indexOf(x) - op.sources.indexOf(y) || x.localeCompare(y));
    const bus = el("div", { class: "mix-bus", "data-mix-bus": b.address },
      el("h2", {}, el("span", { text: short(b.address) + " sound" }), el("span", { class: "dim", text: a.mix_minus_of ? "mix-minus of " + short(a.mix_minus_of) : "" })));
    bus.append(mixStrip(b.address, "", "master", lo, hi));
    for (const src of strips) bus.append(mixStrip(b.address, src, short(src), lo, hi));
    box.append(bus);
  }
  renderMixer();
}
// mixStrip is one fader's row: a source's on a bus, or with src "" the
// bus's master.
function mixStrip(bus, src, label, lo, hi) {
  const key = bus + "|" + src;
  const f = el("input", { type: "range", min: lo, max: hi, step: 0.5, title: (src ? src + " on " + bus : bus + "'s master") + ", dB", "data-fader": key });
  const val = el("span", { class: "db", "data-fader-db": key });
  f.oninput = () => { val.textContent = dbText(+f.value, lo); };
  f.onchange = () => {
    mixPending[key] = +f.value;
    setMix(bus, src ? { source: src, gain_db: +f.value } : { master_db: +f.value }, key);
  };
  const row = el("div", { class: "mix-strip" + (src ? "" : " master") }, el("span", { class: "name", text: label }), f, val);
  if (src) {
    const mute = el("button", { class: "mute", text: "MUTE", title: "mute " + src + " on " + bus, "data-strip-mute": key });
    mute.onclick = () => setMix(bus, { source: src, mute: !mute.classList.contains("on") });
    row.append(mute);
  }
  row.append(el("div", { class: "meter" }, el("div", { class: "bar" }), el("span", { class: "lufs", "data-mix-level": key })));
  return row;
}
function setMix(bus, change, key) {
  return api("POST", "/buses/" + enc(bus) + "/audio", change).then(poll).catch((e) => {
    if (key) delete mixPending[key];
    log(e.message, "error");
    renderMixer();
  });
}
const dbText = (db, lo) => (db <= lo ? "off" : (db > 0 ? "+" : "") + db.toFixed(1) + " dB");
// renderMixer sets every fader, mute and meter of the mixer from /status.
function renderMixer() {
  const levelOf = {};
  for (const x of [...status.summary.buses, ...status.summary.sources]) levelOf[x.address] = x.audio;
  for (const b of status.summary.buses) {
    const a = b.audio;
    if (!a || !a.strips) continue;
    const lo = (a.fader_range_db || [-120])[0];
    for (const src of ["", ...Object.keys(a.strips)]) {
      const key = b.address + "|" + src;
      const f = $('[data-fader="' + CSS.escape(key) + '"]');
      if (!f) continue;
      const st = src ? a.strips[src] : { gain_db: a.master_db || 0 };
      const held = key in mixPending;
      if (held && mixPending[key] === st.gain_db) delete mixPending[key];
      if (!(key in mixPending)) {
        f.value = st.gain_db;
        $('[data-fader-db="' + CSS.escape(key) + '"]').textContent = dbText(st.gain_db, lo);
      }
      const mute = $('[data-strip-mute="' + CSS.escape(key) + '"]');
      if (mute) mute.classList.toggle("on", !!st.mute);
      mixMeter($('[data-mix-level="' + CSS.escape(key) + '"]'), levelOf[src || b.address]);
    }
  }
}
// mixMeter draws a strip's meter: momentary loudness from -60 to 0 LUFS.
function mixMeter(lufsEl, a) {
  if (!lufsEl) return;
  const m = lufsEl.parentElement;
  const lufs = a ? a.momentary_lufs : null;
  m.querySelector(".bar").style.width = (lufs === null ? 0 : Math.max(0, Math.min(100, (lufs + 60) * 100 / 60))) + "%";
  m.classList.toggle("hot", !!a && a.true_peak_dbtp !== null && a.true_peak_dbtp > -1);
  lufsEl.textContent = lufs === null ? "silence" : lufs.toFixed(1) + " LUFS";
  lufsEl.dataset.lufs = lufs === null ? "" : lufs;
}

const short = (s) => s.replace(/^(bus|scene|source)\./, "");
const enc = (s) => encodeURIComponent(short(s));

boot();
