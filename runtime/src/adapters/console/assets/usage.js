// The console's usage panel, for approvers: per tool, the calls of the last days, how they
// ended, how long they took, the approvals asked and what came of them (GET /usage).
"use strict";

(() => {
  const ms = (value) => (value === null || value === undefined ? "–" : `${value.toFixed(1)} ms`);
  const when = (value) => (value ? new Date(value).toLocaleString() : "–");

  function errors(figures) {
    const parts = Object.entries(figures.errors).map(([code, count]) => `${code} ${count}`);
    return parts.length ? parts.join(", ") : "–";
  }

  /** Fills `table` (its tbody) and `unused` from the report, as text only. */
  function render(el, report, table, unused) {
    const rows = report.by_tool.map((figures) => {
      const a = figures.approvals;
      return el("tr", { "data-tool": figures.name },
        el("td", el("code", figures.name)),
        el("td", { class: "number" }, String(figures.calls)),
        el("td", { class: "number" }, String(figures.ok)),
        el("td", errors(figures)),
        el("td", { class: "number" }, ms(figures.p50_ms)),
        el("td", { class: "number" }, ms(figures.p95_ms)),
        el("td", { class: "number" }, `${a.asked} / ${a.granted} / ${a.refused} / ${a.expired}`),
        el("td", when(figures.last_used_ms)));
    });
    table.tBodies[0].replaceChildren(...rows);
    unused.textContent = report.unused.length ? `Not used: ${report.unused.join(", ")}` : "Every tool was used.";
  }

  /** Reads the last `days` days and shows them; a failure is said in the panel. */
  async function show(el, api, days, table, unused, note) {
    try {
      const report = await api(`/usage?days=${days}`);
      render(el, report, table, unused);
      note.textContent = `${report.calls} calls in the last ${days} days`;
    } catch (error) {
      note.textContent = `The usage could not be read: ${error.message}`;
    }
  }

  window.toolgateUsage = Object.freeze({ show });
})();
