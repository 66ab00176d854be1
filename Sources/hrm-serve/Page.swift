/// The live page, compiled into the binary: nothing to install beside it, nothing fetched from
/// elsewhere (no CDN, no web fonts), so it works offline and leaks nothing.
///
/// One tile per strap (a team view when there are several): a large BPM, a heart that beats with
/// the strap's RR intervals, the zone, a sparkline, the ECG's last 4 s with `--ecg` (a canvas,
/// hidden until the first `ecg` event), contact, battery, RR and HRV. After 3 s without
/// a measurement, or when the strap's status says it is not connected, the tile shows the offline
/// text instead of a frozen number. The feed is `events` (SSE), a relative URL so that the page
/// works behind a path prefix; EventSource reconnects by itself, and the server sends the current
/// state first on every connection, so a restarted hrm is picked up and the history kept.
///
/// Theming without editing files: URL parameters (`?size=`, `?color=`, `?font=`, `?bg=`,
/// `?show=`, `?minutes=`, `?offline=`, `?device=`) and CSS custom properties (`--hrm-*`, e.g. in
/// OBS's "Custom CSS"). Every parameter is untrusted text: validated, and set only through
/// `textContent` and `style.setProperty`, never parsed as HTML.
///
/// `__OFFLINE_TEXT__` stays inside a JS string literal: the server puts `--offline-text` there,
/// escaped as a JSON string's contents.
enum Page {
    static let html = #"""
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>hrm</title>
        <link rel="icon" href="data:,">
        <style>
        :root {
          --hrm-color: #fff;          /* text */
          --hrm-size: 120px;          /* the BPM's font size; the rest scales with it */
          --hrm-team-size: calc(var(--hrm-size) * .6);  /* the BPM with several straps */
          --hrm-font: system-ui, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
          --hrm-bg: transparent;      /* transparent in OBS (and with ?bg=transparent); #111 elsewhere */
          --hrm-shadow: 0 0 .08em #000, 0 .03em .1em #000c;  /* readable on any scene */
          --hrm-heart: #ff3b4e;       /* the heart and graph when no zones are set */
          --hrm-offline: #b0b0b0;     /* the offline text and the idle heart */
          --hrm-warn: #ffb74d;        /* no contact, low battery */
          --hrm-zone-0: #b39ddb;      /* below zone 1 */
          --hrm-zone-1: #cfd8dc;
          --hrm-zone-2: #42a5f5;
          --hrm-zone-3: #66bb6a;
          --hrm-zone-4: #ffa726;
          --hrm-zone-5: #ef5350;
        }
        html, body { margin: 0; background: var(--hrm-bg); }
        body { color: var(--hrm-color); font-family: var(--hrm-font); text-shadow: var(--hrm-shadow); }
        [hidden] { display: none !important; }
        #tiles { display: flex; flex-wrap: wrap; align-items: flex-start; gap: .5em 1.5em; padding: .3em .5em; }
        .tile { --s: var(--hrm-size); font-size: calc(var(--s) * .2); line-height: 1.25; }
        .team .tile { --s: var(--hrm-team-size); }
        .tile[data-zone="0"] { --zc: var(--hrm-zone-0); }
        .tile[data-zone="1"] { --zc: var(--hrm-zone-1); }
        .tile[data-zone="2"] { --zc: var(--hrm-zone-2); }
        .tile[data-zone="3"] { --zc: var(--hrm-zone-3); }
        .tile[data-zone="4"] { --zc: var(--hrm-zone-4); }
        .tile[data-zone="5"] { --zc: var(--hrm-zone-5); }
        .main { display: flex; align-items: center; gap: .25em; white-space: nowrap; }
        .heart { width: calc(var(--s) * .62); height: calc(var(--s) * .62); flex: none;
          color: var(--zc, var(--hrm-heart)); filter: drop-shadow(0 0 calc(var(--s) * .02) #000); }
        .heart path { fill: currentColor; }
        .bpm { font-size: var(--s); font-weight: 700; line-height: 1; font-variant-numeric: tabular-nums; }
        .unit { align-self: flex-end; margin-bottom: .4em; opacity: .8; }
        .zone { display: inline-block; padding: 0 .4em; border-radius: .3em; font-weight: 700;
          background: var(--zc); color: #111; text-shadow: none; }
        .meta { display: flex; flex-wrap: wrap; gap: 0 .6em; }
        .warn { color: var(--hrm-warn); }
        .offline-text { color: var(--hrm-offline); font-weight: 700; }
        .graph { display: block; width: calc(var(--s) * 2.6); height: calc(var(--s) * .5); margin-top: .2em; overflow: visible; }
        .graph path { fill: none; stroke: var(--hrm-graph, var(--zc, var(--hrm-heart))); stroke-width: 3px;
          stroke-linejoin: round; stroke-linecap: round; vector-effect: non-scaling-stroke;
          filter: drop-shadow(0 0 1px #000); }
        .ecg { display: block; width: calc(var(--s) * 2.6); height: calc(var(--s) * .45); margin-top: .2em;
          filter: drop-shadow(0 0 1px #000); }
        .offline .ecg { opacity: .45; }
        .offline .heart { color: var(--hrm-offline); }
        .offline .heart path { fill: none; stroke: currentColor; stroke-width: 1.6; }  /* hollow: no signal */
        .offline .bpm, .offline .graph, .offline .zone { opacity: .45; }
        .tile:not(.offline) .offline-text { display: none; }
        /* Outside OBS, a way to the session library's charts (never on a stream: hidden there). */
        #trends-link { position: fixed; right: .8em; bottom: .5em; font-size: 14px; color: #8ab4f8;
          text-shadow: none; opacity: .75; }
        /* ?show= decides which parts appear at all (see the script). */
        body:not(.show-heart) .heart, body:not(.show-bpm) .bpm, body:not(.show-bpm) .unit,
        body:not(.show-zone) .zone, body:not(.show-graph) .graph, body:not(.show-ecg) .ecg, body:not(.show-rr) .rr,
        body:not(.show-hrv) .hrv, body:not(.show-name) .name, body:not(.show-battery) .battery,
        body:not(.show-contact) .contact { display: none; }
        </style></head>
        <body>
        <main id="tiles"></main>
        <a id="trends-link" href="trends" hidden>trends</a>
        <template id="tile"><section class="tile">
          <div class="main">
            <svg class="heart" viewBox="0 0 24 24" aria-hidden="true"><path d="M12 21C5 15.6 2 12.3 2 8.4A5 5 0 0 1 12 6a5 5 0 0 1 10 2.4c0 3.9-3 7.2-10 12.6z"/></svg>
            <span class="bpm">--</span><span class="unit">bpm</span>
          </div>
          <div class="offline-text"></div>
          <div><span class="zone" hidden></span></div>
          <div class="meta"><span class="name"></span><span class="contact" hidden></span><span class="battery" hidden></span></div>
          <div class="rr" hidden></div>
          <div class="hrv" hidden></div>
          <svg class="graph" viewBox="0 0 300 60" preserveAspectRatio="none" aria-hidden="true"><path/></svg>
          <canvas class="ecg" width="520" height="90" hidden aria-hidden="true"></canvas>
        </section></template>
        <script>
        "use strict";
        const serverOffline = "__OFFLINE_TEXT__";
        const STALE_MS = 3000;       // no measurement for this long: offline
        const GRAPH_W = 300, GRAPH_H = 60;
        const params = new URLSearchParams(location.search);
        const root = document.documentElement.style;

        // Parameters are untrusted: each is checked, then set as one CSS property value (which
        // cannot end the declaration or the style sheet) or as text. Anything else is ignored.
        function param(name, pattern, max) {
          const v = (params.get(name) || "").trim();
          return v && v.length <= max && pattern.test(v) ? v : null;
        }
        let size = param("size", /^\d{1,4}(\.\d{1,3})?(px|pt|em|rem|vw|vh|vmin|vmax)?$/, 12);
        if (size && /\d$/.test(size)) size += "px";
        if (size && CSS.supports("font-size", size)) root.setProperty("--hrm-size", size);
        // OBS's browser source (its user agent names it) lays the page over a scene: transparent.
        // A plain browser would show white digits on white: a dark page there, unless ?bg= says.
        if (!/\bOBS\//.test(navigator.userAgent)) root.setProperty("--hrm-bg", "#111");
        // The link to /trends (relative: behind a path prefix too) for a person looking, not a scene.
        if (!/\bOBS\//.test(navigator.userAgent) && !params.has("bg")) document.getElementById("trends-link").hidden = false;
        for (const [name, property] of [["color", "--hrm-color"], ["bg", "--hrm-bg"]]) {
          // Colours only (no url(): the page loads nothing); "ff0000" for "#ff0000", as a URL's # needs escaping.
          let c = param(name, /^[#\w\s.,%()+-]+$/, 60);
          if (c && /^([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.test(c)) c = "#" + c;
          if (c && CSS.supports("color", c)) root.setProperty(property, c);
        }
        const font = param("font", /^[\w\s,'"-]+$/, 100);
        if (font && CSS.supports("font-family", font)) root.setProperty("--hrm-font", font);
        const PARTS = ["heart", "bpm", "zone", "graph", "ecg", "rr", "hrv", "name", "battery", "contact"];
        const shown = (params.get("show") || "heart,bpm,zone,graph,ecg,name,battery,contact").split(",").map((s) => s.trim());
        for (const part of PARTS) document.body.classList.toggle("show-" + part, shown.includes(part));
        const minutes = Math.min(60, Math.max(0.5, Number(params.get("minutes")) || 5));
        const SPAN_MS = minutes * 60000;
        const POINT_MS = SPAN_MS / 300;             // at most ~300 points per graph, whatever the rate
        const GAP_MS = POINT_MS + STALE_MS;         // points further apart: a gap in the line
        const offlineText = (params.get("offline") ?? serverOffline).slice(0, 200);
        const only = (params.get("device") || "").trim().toLowerCase();

        // Tiles by device address; "" is a placeholder, shown (offline after 3 s) until a strap is.
        const tiles = new Map();
        const template = document.getElementById("tile");
        const list = document.getElementById("tiles");

        function tile(device) {
          let t = tiles.get(device);
          if (t) return t;
          if (tiles.size > 64) return null;
          const el = template.content.firstElementChild.cloneNode(true);
          const q = (s) => el.querySelector(s);
          t = { device, el, heart: q(".heart"), bpmEl: q(".bpm"), zone: q(".zone"), name: q(".name"),
            contact: q(".contact"), battery: q(".battery"), rr: q(".rr"), hrv: q(".hrv"),
            path: q(".graph path"), ecgEl: q(".ecg"), ecg: [], status: null, label: device, bpm: null, lastAt: performance.now(),
            points: [], beats: [], beating: false, offline: null };
          el.dataset.device = device;
          t.name.textContent = device;
          q(".offline-text").textContent = offlineText;
          tiles.set(device, t);
          // In address order, so that the team view does not reshuffle with each reload.
          list.insertBefore(el, [...list.children].find((x) => x.dataset.device > device) || null);
          place();
          return t;
        }

        // ?device= keeps one strap (its address, or part of its name): one browser source each.
        function place() {
          let visible = 0;
          for (const t of tiles.values()) {
            if (t.device === "") continue;
            const d = t.device.toLowerCase(), name = t.label.toLowerCase();
            t.el.hidden = only !== "" && d !== only && !name.includes(only);
            if (!t.el.hidden) visible++;
          }
          const placeholder = tiles.get("");
          if (placeholder) placeholder.el.hidden = visible > 0;
          document.body.classList.toggle("team", visible > 1);
        }

        const num = (v, lo, hi) => typeof v === "number" && Number.isFinite(v) && v >= lo && v <= hi;

        function handle(e) {
          if (e.type === "status" && typeof e.device !== "string") {
            // The session's own status: once it stops, every strap has.
            if (e.state === "stopped") for (const t of tiles.values()) { t.status = "stopped"; update(t); }
            return;
          }
          if (typeof e.device !== "string" || e.device === "") return;
          const t = tile(e.device.slice(0, 64));
          if (!t) return;
          switch (e.type) {
            case "status":
              if (typeof e.state === "string") t.status = e.state;
              break;
            case "info":
              if (typeof e.name === "string" && e.name) { t.label = e.name.slice(0, 64); t.name.textContent = t.label; place(); }
              battery(t, e.battery);
              break;
            case "battery":
              battery(t, e.percent);
              break;
            case "measurement":
              measurement(t, e);
              break;
            case "ecg":
              ecg(t, e);
              break;
            case "hrv": {
              const parts = [];
              if (num(e.rmssd_ms, 0, 1e4)) parts.push("RMSSD " + e.rmssd_ms.toFixed(1) + " ms");
              if (num(e.alpha1, -10, 10)) parts.push("α1 " + e.alpha1.toFixed(2));
              t.hrv.textContent = parts.join(" · ");
              t.hrv.hidden = parts.length === 0;
              break;
            }
          }
          update(t);
        }

        function battery(t, percent) {
          if (!num(percent, 0, 100)) return;
          t.battery.textContent = "battery " + Math.round(percent) + " %";
          t.battery.classList.toggle("warn", percent <= 15);
          t.battery.hidden = false;
        }

        function measurement(t, e) {
          if (!num(e.bpm, 0, 400)) return;
          const now = performance.now();
          t.lastAt = now;
          t.bpm = Math.round(e.bpm);
          t.el.dataset.zone = Number.isInteger(e.zone) && e.zone >= 0 && e.zone <= 5 ? e.zone : "";
          // Below zone 1 is no zone to show: no badge (the heart's colour still says it).
          const badge = t.el.dataset.zone !== "" && e.zone > 0;
          t.zone.textContent = badge ? "zone " + e.zone : "";
          t.zone.hidden = !badge;
          t.contact.hidden = e.contact !== "detected" && e.contact !== "not_detected";
          t.contact.textContent = e.contact === "not_detected" ? "no contact" : "contact";
          t.contact.classList.toggle("warn", e.contact === "not_detected");
          const rr = Array.isArray(e.rr_ms) ? e.rr_ms.filter((v) => num(v, 200, 3000)) : [];
          t.rr.textContent = "RR " + rr.map((v) => Math.round(v)).join(" ") + " ms";
          t.rr.hidden = rr.length === 0;
          // The heart plays the strap's own beats; a queue that grows means we fell behind: catch up.
          t.beats.push(...rr);
          if (t.beats.length > 4) t.beats.splice(0, t.beats.length - 2);
          if (t.bpm > 0) {
            const last = t.points[t.points.length - 1];
            if (last && now - last[0] < POINT_MS) last[1] = t.bpm; else t.points.push([now, t.bpm]);
          }
        }

        // hrm watch --ecg: the last ECG_SECONDS of the strap's ECG, scrolling (hidden until the
        // first frame: a strap without ECG shows no empty box).
        const ECG_SECONDS = 4;
        function ecg(t, e) {
          if (!num(e.rate_hz, 1, 1000) || !Array.isArray(e.uv)) return;
          const keep = Math.round(e.rate_hz * ECG_SECONDS);
          if (num(e.lost_samples, 1, 1e6)) t.ecg.length = 0;  // a gap: the trace starts again
          for (const v of e.uv.slice(0, 1000)) if (num(v, -1e7, 1e7)) t.ecg.push(v);
          if (t.ecg.length > keep) t.ecg.splice(0, t.ecg.length - keep);
          t.ecgKeep = keep;
          t.ecgEl.hidden = false;
          t.el.dataset.ecgSamples = t.ecg.length;
          drawECG(t);
        }

        function drawECG(t) {
          const c = t.ecgEl, g = c.getContext("2d");
          g.clearRect(0, 0, c.width, c.height);
          if (t.ecg.length < 2) return;
          let lo = Infinity, hi = -Infinity;
          for (const v of t.ecg) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
          const range = Math.max(hi - lo, 200);  // µV: flat noise stays a flat line
          g.strokeStyle = getComputedStyle(t.path).stroke || "#ff3b4e";
          g.lineWidth = 2.5;
          g.lineJoin = "round";
          g.beginPath();
          // The newest sample at the right edge; the trace fills in from the right at first.
          const step = c.width / (t.ecgKeep - 1), offset = t.ecgKeep - t.ecg.length;
          t.ecg.forEach((v, i) => {
            const x = (offset + i) * step, y = 5 + (1 - (v - lo) / range) * (c.height - 10);
            if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
          });
          g.stroke();
        }

        function update(t) {
          const now = performance.now();
          const offline = (t.status !== null && t.status !== "connected") || now - t.lastAt > STALE_MS || t.bpm === null;
          // Before the first 3 s a tile has not had the chance of a measurement: "--", not offline.
          const waiting = t.bpm === null && t.status === null && now - t.lastAt <= STALE_MS;
          const off = offline && !waiting;
          if (off !== t.offline) {
            t.offline = off;
            t.el.classList.toggle("offline", off);
            t.el.dataset.state = off ? "offline" : "live";
            if (off) t.heart.getAnimations().forEach((a) => a.cancel());  // still at once
          }
          const text = off || !t.bpm ? "--" : String(t.bpm);
          if (t.bpmEl.textContent !== text) t.bpmEl.textContent = text;
          if (!off && !t.beating && t.bpm) beat(t);
        }

        const BEAT = [
          { transform: "scale(1)" }, { transform: "scale(1.2)", offset: 0.12 },
          { transform: "scale(1)", offset: 0.3 }, { transform: "scale(1.07)", offset: 0.42 },
          { transform: "scale(1)", offset: 0.6 }, { transform: "scale(1)" }];

        // One beat lasts one RR interval (60/bpm s when the strap sends none); then the next.
        function beat(t) {
          if (t.offline || !t.bpm) { t.beating = false; t.beats.length = 0; return; }
          t.beating = true;
          const ms = Math.min(2500, Math.max(250, t.beats.length ? t.beats.shift() : 60000 / t.bpm));
          t.heart.animate(BEAT, { duration: ms, easing: "ease-out" });
          setTimeout(() => beat(t), ms);
        }

        function draw(t, now) {
          while (t.points.length && t.points[0][0] < now - SPAN_MS) t.points.shift();
          // The time axis grows with the history (10 s at least) up to the whole span: a graph
          // that has only seconds to show still fills its width.
          const span = Math.min(SPAN_MS, Math.max(10000, t.points.length ? now - t.points[0][0] : 0));
          const from = now - span;
          let lo = Infinity, hi = -Infinity;
          for (const p of t.points) { lo = Math.min(lo, p[1]); hi = Math.max(hi, p[1]); }
          lo -= 5; hi += 5;  // room above and below; a steady rate draws a line mid-height
          let d = "", prev = -Infinity;
          for (const [at, bpm] of t.points) {
            const x = ((at - from) / span * GRAPH_W).toFixed(1);
            const y = (GRAPH_H - (bpm - lo) / (hi - lo) * GRAPH_H).toFixed(1);
            d += (at - prev > GAP_MS ? "M" : "L") + x + " " + y;  // a gap stays a gap
            prev = at;
          }
          t.path.setAttribute("d", d);
        }

        let lastDraw = 0;
        setInterval(() => {
          const now = performance.now();
          for (const t of tiles.values()) update(t);
          if (now - lastDraw >= 1000) { lastDraw = now; for (const t of tiles.values()) draw(t, now); }
        }, 250);

        // EventSource retries by itself after a dropped connection; a refusal (503: too many
        // clients, or a proxy's error page while hrm restarts) closes it for good, so retry here.
        function connect() {
          const source = new EventSource("events");
          source.onmessage = (m) => {
            let e;
            try { e = JSON.parse(m.data); } catch { return; }
            if (e && typeof e === "object") handle(e);
          };
          source.onerror = () => {
            if (source.readyState === EventSource.CLOSED) { source.close(); setTimeout(connect, 3000); }
          };
        }
        tile("");
        connect();
        </script>
        </body></html>
        """#
}
