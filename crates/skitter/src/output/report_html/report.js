// Sortable tables, then a mark on the root element that the page ran to the end
// without an error, which the headless browser test looks for.
(() => {
  "use strict";
  const key = (cell) => {
    const v = cell.getAttribute("data-v");
    return v === null ? cell.textContent.toLowerCase() : Number(v);
  };
  for (const table of document.querySelectorAll("table.sortable")) {
    const heads = Array.from(table.tHead.rows[0].cells);
    heads.forEach((th, col) => {
      th.tabIndex = 0;
      const sort = () => {
        const desc = th.getAttribute("aria-sort") !== "descending";
        heads.forEach((h) => h.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", desc ? "descending" : "ascending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = key(a.cells[col]);
          const y = key(b.cells[col]);
          const c = x < y ? -1 : x > y ? 1 : 0;
          return desc ? -c : c;
        });
        rows.forEach((r) => body.appendChild(r));
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          sort();
        }
      });
    });
  }
  const charts = document.querySelectorAll("svg.chart");
  for (const svg of charts) {
    const box = svg.getBoundingClientRect();
    if (!(box.width > 0 && box.height > 0)) {
      throw new Error("chart not drawn: " + svg.getAttribute("aria-label"));
    }
  }
  // Axis labels must stay inside their chart and clear of each other: the first
  // problem found is written on the root element for the browser test to read.
  let axes = "ok";
  for (const svg of charts) {
    const box = svg.getBoundingClientRect();
    const labels = Array.from(svg.querySelectorAll("text.t, text.tick"));
    labels.forEach((text, i) => {
      const r = text.getBoundingClientRect();
      if (r.width === 0 || r.left < box.left - 0.5 || r.right > box.right + 0.5) {
        axes = "label outside its chart: " + text.textContent;
      }
      for (const other of labels.slice(i + 1)) {
        const o = other.getBoundingClientRect();
        if (r.left < o.right && o.left < r.right && r.top < o.bottom && o.top < r.bottom) {
          axes = "labels overlap: " + text.textContent + " / " + other.textContent;
        }
      }
    });
  }
  document.documentElement.dataset.axes = axes;
  document.documentElement.dataset.charts = String(charts.length);
  document.documentElement.dataset.rendered = "ok";
})();
