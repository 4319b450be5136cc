// A minimal DevTools client for scripts/bench-render-bare.sh: renders a list
// of URLs in a bare headless Chromium driven by puppeteer-core, the way
// skitter's renderer does (crates/skitter/src/render/), without skitter.
//
//   node scripts/lib-bare-chromium.mjs URLS_FILE TABS CHROMIUM [SETTLE_MS]
//
// Starts CHROMIUM with the arguments skitter gives it ($BARE_ARGS, see
// bench-render-bare.sh; not the closed proxy, as the browser fetches the
// pages itself here), opens TABS tabs and keeps them:
// each takes the next URL, navigates to it, waits for the load event, lets
// the page settle as skitter does (SETTLE_MS, default 1000, of page time on
// DevTools virtual time under pauseIfNetworkFetchesPending, until Chromium
// says the budget is spent), and reads the DOM (page.content()). A reused
// tab's clock is set to advance before its next navigation, as skitter does.
//
// Prints one JSON line: pages rendered, failed, bytes of DOM read, the wall
// of the render loop (first navigation to last read, tabs opened) and of the
// whole run, this process's own CPU (node, without Chromium), and the median
// milliseconds of each step (load: to the load event; settle; read).
//
// Needs puppeteer-core, found through NODE_PATH (the script installs it in
// target/bare-npm).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH || ".", "x.js"));
const puppeteer = require("puppeteer-core");

const [urlsFile, tabsArg, chromium, settleArg] = process.argv.slice(2);
const urls = readFileSync(urlsFile, "utf8").split("\n").filter(Boolean);
const tabs = Number(tabsArg);
const settle = Number(settleArg || 1000);
// skitter's default --render-timeout.
const LIMIT = 15000;

// skitter's own Chromium arguments, one a line, which bench-render-bare.sh
// reads from skitter's source (so the two cannot drift apart).
const ARGS = (process.env.BARE_ARGS || "").split("\n").filter(Boolean);
if (ARGS.length === 0) throw new Error("BARE_ARGS is empty: run me through scripts/bench-render-bare.sh");
if (process.env.BARE_NO_SANDBOX) ARGS.push("--no-sandbox", "--disable-setuid-sandbox");

const begin = performance.now();
const browser = await puppeteer.launch({
  executablePath: chromium,
  ignoreDefaultArgs: true,
  args: ARGS,
  // skitter's tabs keep chromiumoxide's default viewport, 800x600, as
  // puppeteer's default does.
  defaultViewport: { width: 800, height: 600 },
  protocolTimeout: LIMIT * 2,
});

let next = 0;
let rendered = 0;
let failed = 0;
let bytes = 0;
const errors = [];

// Milliseconds of each step of every render, for the medians printed.
const steps = { load: [], settle: [], read: [] };

async function render(page, cdp, used, url) {
  const t0 = performance.now();
  if (used) await cdp.send("Emulation.setVirtualTimePolicy", { policy: "advance" });
  await page.goto(url, { waitUntil: "load", timeout: LIMIT });
  const t1 = performance.now();
  const spent = new Promise((resolve) => cdp.once("Emulation.virtualTimeBudgetExpired", resolve));
  await cdp.send("Emulation.setVirtualTimePolicy", {
    policy: "pauseIfNetworkFetchesPending",
    budget: settle,
  });
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("virtual time budget never spent")), LIMIT);
  });
  try {
    await Promise.race([spent, late]);
  } finally {
    clearTimeout(timer);
  }
  const t2 = performance.now();
  const length = (await page.content()).length;
  steps.load.push(t1 - t0);
  steps.settle.push(t2 - t1);
  steps.read.push(performance.now() - t2);
  return length;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Number(s[Math.floor(s.length / 2)].toFixed(1)) : 0;
}

async function tab() {
  const page = await browser.newPage();
  const cdp = await page.createCDPSession();
  let used = false;
  while (next < urls.length) {
    const url = urls[next++];
    try {
      bytes += await render(page, cdp, used, url);
      rendered++;
    } catch (e) {
      failed++;
      if (errors.length < 5) errors.push(`${url}: ${e.message}`);
    }
    used = true;
  }
}

const loop = performance.now();
await Promise.all(Array.from({ length: tabs }, tab));
const loopWall = (performance.now() - loop) / 1000;
await browser.close();
const cpu = process.cpuUsage();
console.log(
  JSON.stringify({
    rendered,
    failed,
    dom_bytes: bytes,
    loop_wall: Number(loopWall.toFixed(3)),
    wall: Number(((performance.now() - begin) / 1000).toFixed(3)),
    node_cpu: Number(((cpu.user + cpu.system) / 1e6).toFixed(3)),
    median_ms: { load: median(steps.load), settle: median(steps.settle), read: median(steps.read) },
    errors,
  }),
);
