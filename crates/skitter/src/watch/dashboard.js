// The live dashboard: polls /api/status once a second and fills the page.
// Text goes in through textContent only, so nothing a crawled site sent can
// become markup.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const history = [];
  let ended = false;

  function fmtBytes(n) {
    if (n === null || n === undefined) return "–";
    const units = ["B", "KB", "MB", "GB", "TB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
  }
  function fmt(key, v) {
    if (v === null || v === undefined) return "–";
    if (key === "bytes" || key === "resident_bytes" || key === "frontier_disk_bytes") return fmtBytes(v);
    if (key === "delay_seconds") return Math.round(v * 1000) + " ms";
    if (key === "rate") return v.toFixed(1);
    return String(v);
  }
  function rows(tbody, list) {
    tbody.replaceChildren();
    for (const cells of list) {
      const tr = document.createElement("tr");
      for (const c of cells) {
        const td = document.createElement("td");
        td.textContent = String(c);
        tr.appendChild(td);
      }
      tbody.appendChild(tr);
    }
  }
  function chart(svg) {
    const ns = "http://www.w3.org/2000/svg";
    svg.replaceChildren();
    if (history.length < 2) return;
    const max = Math.max(1, ...history.map((p) => p[1]));
    const t0 = history[0][0], t1 = history[history.length - 1][0];
    const span = Math.max(1, t1 - t0);
    const pts = history.map(([t, v]) => ((t - t0) / span * 590 + 5).toFixed(1) + "," + (115 - v / max * 105).toFixed(1));
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", pts.join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", "currentColor");
    line.setAttribute("stroke-width", "2");
    svg.appendChild(line);
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", "6"); label.setAttribute("y", "12");
    label.textContent = "max " + max.toFixed(1) + "/s";
    svg.appendChild(label);
  }
  let last = null;
  function show(s) {
    for (const el of document.querySelectorAll("[data-n]")) {
      const key = el.dataset.n;
      const v = key in s ? s[key] : (s.counters[key] || 0);
      el.textContent = fmt(key, v);
    }
    const state = $("state");
    state.textContent = s.ended ? "ended" : s.paused ? "paused" : "running";
    state.className = "badge " + (s.ended ? "done" : s.paused ? "stopped" : "done");
    $("since").textContent = Math.round(s.elapsed_seconds) + " s";
    if (last) {
      const dt = s.elapsed_seconds - last.elapsed_seconds;
      if (dt > 0) history.push([s.elapsed_seconds, (s.done - last.done) / dt]);
      while (history.length > 600) history.shift();
    }
    last = s;
    chart($("rate"));
    const c = s.counters;
    rows($("outcomes"), ["html", "other", "redirect", "error", "fail", "skipped"]
      .filter((k) => c[k]).map((k) => [k, c[k]]));
    const rb = s.response_seconds;
    let prev = 0;
    rows($("latency"), rb.buckets.map(([le, n]) => { const own = n - prev; prev = n; return ["≤ " + le + " s", own]; })
      .concat([["> " + rb.buckets[rb.buckets.length - 1][0] + " s", rb.count - prev]]));
    // A count inherited from displaced hosts (a crawl of very many) shows as "≤".
    rows($("busiest"), s.busiest_hosts.map((h) => [h.host, (h.over ? "≤ " : "") + h.pages]));
    rows($("hosts"), s.throttled_hosts.map((h) => [h.host, h.slowdowns, Object.keys(h.reasons).join(", ")]));
    if (s.crawl || s.crawl_error) {
      $("whole").hidden = false;
      $("crawl_error").textContent = s.crawl_error ? "Redis: " + s.crawl_error : "";
      const w = s.crawl || { counters: {} };
      rows($("crawl"), [["URLs done", w.done], ["queued", w.queued], ["leased", w.leased], ["seen", w.seen], ["claimed", w.claimed]]
        .concat(["html", "other", "redirect", "error", "fail", "skipped"].filter((k) => w.counters[k]).map((k) => [k, w.counters[k]]))
        .filter((r) => r[1] !== undefined));
      rows($("workers"), (s.workers || []).map((x) => [x.worker + (x.this ? " (this)" : ""), x.done, x.in_flight,
        Number(x.rate).toFixed(1), x.ended ? "ended" : x.paused ? "paused" : "running", Math.round(x.age_seconds) + " s ago"]));
    }
    rows($("recent"), s.recent_errors.slice().reverse().map((e) => [e.url, e.what]));
    rows($("errors"), Object.keys(c).filter((k) => k.startsWith("fail_") || k.startsWith("status_")).map((k) => [k, c[k]]));
    if (s.report && !ended) { ended = true; location.reload(); }
  }
  async function poll() {
    try {
      const r = await fetch("/api/status", { cache: "no-store" });
      if (r.ok) show(await r.json());
    } catch (e) {
      $("state").textContent = "unreachable";
    }
    if (!ended) setTimeout(poll, 1000);
  }
  async function command(cmd) {
    let path = "/control/" + cmd;
    if (cmd === "set") {
      // Only the boxes filled in are sent; the rest stay as they are.
      const given = [["max_tasks", "tasks"], ["per_host", "per_host"], ["delay_ms", "delay_ms"]]
        .filter(([, id]) => $(id).value !== "")
        .map(([name, id]) => name + "=" + encodeURIComponent($(id).value));
      path += "?" + given.join("&");
    }
    const r = await fetch(path, { method: "POST", headers: { Authorization: "Bearer " + $("token").value } });
    $("said").textContent = r.ok ? cmd + ": done" : cmd + ": " + r.status + " " + (await r.text());
  }
  for (const b of document.querySelectorAll("[data-cmd]")) {
    b.addEventListener("click", () => command(b.dataset.cmd));
  }
  poll();
})();
