// The operator's page: a multiviewer (every bus and, on request, every
// source as a live tile with its tally) and the bus controls (cut, fade and
// wipe; preview and take). It reads GET /status once a second for the
// counters, follows GET /events for switches, tally, source errors and
// missed deadlines as they happen, and refreshes each tile's JPEG from GET
// /snapshot/NAME a few times a second while the page is visible. Every
// change is a same-origin POST with a JSON body, which the server's CSRF
// checks accept; with a token the page logs in once (POST /login) and the
// server keeps a session cookie.
"use strict";

const $ = (sel, el = document) => el.querySelector(sel);
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

const TILE_PERIOD_MS = 200; // a tile asks for its next snapshot this long after one arrived

let op = null;        // the operator's view: {buses, tally, sources}
let status = null;    // the last GET /status
let lastTicks = {};   // bus → [ticks, time] of the last poll
let fpsOf = {};       // bus → frames drawn per second between the last two polls
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
    document.addEventListener("visibilitychange", () => { if (!document.hidden) build(); });
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

// build lays out the controls and the wall from op.
function build() {
  const controls = $("#controls");
  controls.replaceChildren();
  // Program buses first, then AUX, each in name order.
  op.buses.sort((a, b) => (a.kind === b.kind ? a.address.localeCompare(b.address) : a.kind === "program" ? -1 : 1));
  for (const b of op.buses) {
    const box = el("div", { class: "bus", "data-bus": b.address });
    box.append(el("h2", {}, el("span", { text: b.address }),
      el("span", { class: "badge " + (b.kind === "program" ? "pgm" : "aux"), text: b.kind === "program" ? "PGM" : "AUX" }),
      el("span", { class: "badge", "data-timing": b.address }),
      el("span", { class: "badge", "data-missed": b.address }),
      el("span", { class: "badge tc", "data-tc": b.address, title: "the timecode of the tick last drawn" })));
    if (b.scenes && b.scenes.length) {
      const pgm = el("div", { class: "row" }, el("span", { class: "label", text: "PGM" }));
      for (const s of b.scenes) {
        const btn = el("button", { class: "scene", text: short(s), title: "put " + s + " on air with the transition below", "data-pgm": b.address + "|" + s });
        btn.onclick = () => sw(b.address, s);
        pgm.append(btn);
      }
      box.append(pgm);
      if (b.kind === "program") {
        const pvw = el("div", { class: "row" }, el("span", { class: "label", text: "PVW" }));
        for (const s of b.scenes) {
          const btn = el("button", { class: "scene", text: short(s), title: "put " + s + " on preview", "data-pvw": b.address + "|" + s });
          btn.onclick = () => api("POST", "/buses/" + enc(b.address) + "/preview", { scene: s }).catch((e) => log(e.message, "error"));
          pvw.append(btn);
        }
        box.append(pvw);
      }
      const kind = el("select", { "data-kind": b.address, title: "transition" },
        el("option", { value: "cut", text: "cut" }), el("option", { value: "fade", text: "fade" }), el("option", { value: "wipe", text: "wipe" }));
      const dur = el("input", { class: "dur", "data-dur": b.address, value: "1s", title: "duration of a fade or wipe", inputMode: "text" });
      const row = el("div", { class: "row" }, el("span", { class: "label", text: "" }), kind, dur);
      if (b.kind === "program") {
        const take = el("button", { class: "take", text: "TAKE", title: "put the preview on air with the transition", "data-take": b.address });
        take.onclick = () => {
          const body = { transition: kind.value };
          if (kind.value !== "cut") body.duration = dur.value;
          api("POST", "/buses/" + enc(b.address) + "/take", body).catch((e) => log(e.message, "error"));
        };
        row.append(take);
      }
      box.append(row);
    }
    controls.append(box);
  }

  const wall = $("#wall");
  wall.replaceChildren();
  const names = op.buses.map((b) => b.address);
  if ($("#show-sources").checked) names.push(...op.sources);
  for (const n of names) wall.append(tile(n));
  render();
}

function tile(name) {
  const img = el("img", { alt: name });
  const t = el("div", { class: "tile", "data-tile": name }, img,
    el("div", { class: "label" }, el("span", { class: "name", text: short(name) }), el("span", { class: "tags" })));
  let timer = 0;
  const next = (delay) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!t.isConnected) return;
      if (document.hidden) return next(1000);
      img.src = "/snapshot/" + encodeURIComponent(name) + "?t=" + Date.now();
    }, delay);
  };
  img.onload = () => { t.dataset.loaded = "1"; t.dataset.loads = (+t.dataset.loads || 0) + 1; next(TILE_PERIOD_MS); };
  img.onerror = () => next(500); // the first snapshot is being taken, or the server went away
  next(0);
  return t;
}

// render sets the tally borders, the buttons' states and the badges.
function render() {
  if (!op) return;
  for (const b of op.buses) {
    const onAir = new Set(b.on_air || []);
    document.querySelectorAll('[data-pgm^="' + CSS.escape(b.address) + '|"]').forEach((btn) => {
      btn.classList.toggle("pgm", onAir.has(btn.dataset.pgm.split("|")[1]));
    });
    document.querySelectorAll('[data-pvw^="' + CSS.escape(b.address) + '|"]').forEach((btn) => {
      btn.classList.toggle("pvw", btn.dataset.pvw.split("|")[1] === b.preview);
    });
    const t = $('[data-tile="' + CSS.escape(b.address) + '"]');
    if (t) {
      t.classList.toggle("pgm", b.kind === "program");
      const tags = $(".tags", t);
      tags.replaceChildren(el("span", { class: "badge " + (b.kind === "program" ? "pgm" : "aux"), text: b.kind === "program" ? "PGM" : "AUX" }),
        el("span", { text: (b.on_air || []).map(short).join(" → ") || (b.sources || []).map(short).join(" ") }));
      if (b.preview) tags.append(el("span", { class: "badge pvw", text: "PVW " + short(b.preview) }));
      if (b.missed_deadlines > 0) tags.append(el("span", { class: "badge warn", text: b.missed_deadlines + " missed" }));
    }
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
  on("hello", (d) => { op = d.operator; });
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
    api("GET", "/status").then((st) => { status = st; op = st.operator; build(); }).catch((e) => log(e.message, "error"));
  });
}

function sw(bus, scene) {
  const kind = $('[data-kind="' + CSS.escape(bus) + '"]').value;
  const body = { scene };
  if (kind !== "cut") body.duration = $('[data-dur="' + CSS.escape(bus) + '"]').value;
  api("POST", "/buses/" + enc(bus) + "/" + kind, body).catch((e) => log(e.message, "error"));
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
    const pgm = op.buses.find((b) => b.kind === "program");
    if (pgm) $("#pgm-tc").textContent = busTC(pgm.address, now) || "--:--:--:--";
    for (const b of op.buses) {
      const e = $('[data-tc="' + CSS.escape(b.address) + '"]');
      if (e) e.textContent = busTC(b.address, now);
    }
  }
  requestAnimationFrame(clock);
}

const short = (s) => s.replace(/^(bus|scene|source)\./, "");
const enc = (s) => encodeURIComponent(short(s));

boot();
