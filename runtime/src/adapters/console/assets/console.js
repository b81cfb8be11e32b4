// toolgate's approval console. Everything a call carries (names, arguments, results,
// reasons) is put into the page as text, never as markup.
"use strict";

(() => {
  const TOKEN_KEY = "toolgate.console.token";
  const FEED_LIMIT = 100;

  const state = {
    config: null,
    me: null,
    token: sessionStorage.getItem(TOKEN_KEY),
    components: new Map(),
    // The feed's rows by call, newest last; a call id may come back for a new call.
    rows: new Map(),
    // Waiting calls shown, by ticket id.
    cards: new Map(),
    events: null,
  };

  const $ = (id) => document.getElementById(id);

  /**
   * An element with attributes (optional) and children; strings become text, never markup.
   * `el("p", {class: "note"}, "text", el("b", "bold"))`.
   */
  function el(tag, attributes, ...children) {
    const plain = attributes && typeof attributes === "object" && !(attributes instanceof Node) && !Array.isArray(attributes);
    if (!plain) {
      children.unshift(attributes);
      attributes = {};
    }
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "class") element.className = value;
      else element.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null) continue;
      element.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return element;
  }

  // What the application's components script uses.
  window.toolgate = Object.freeze({
    el,
    component(name, render) {
      if (typeof name !== "string" || typeof render !== "function") {
        throw new TypeError("toolgate.component(name, (result, outcome) => Node)");
      }
      state.components.set(name, render);
    },
  });

  class ApiError extends Error {
    constructor(status, error) {
      super(error && error.message ? error.message : `the server answered ${status}`);
      this.status = status;
      this.code = error && error.code;
    }
  }

  function headers(extra = {}) {
    const all = { ...extra };
    if (state.token) all.Authorization = `Bearer ${state.token}`;
    return all;
  }

  async function api(path, options = {}) {
    const response = await fetch(state.config.api + path, {
      ...options,
      headers: headers(options.headers),
      credentials: "same-origin",
      cache: "no-store",
    });
    const body = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, body && body.error);
    return body;
  }

  const post = (path, body) =>
    api(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });

  const pretty = (value) => JSON.stringify(value, null, 2);
  const clock = (millis) => new Date(millis).toLocaleTimeString();

  /** A result, by its tool's component when the application registered one. */
  function rendered(result, outcome) {
    const render = outcome.ui && state.components.get(outcome.ui);
    if (render) {
      try {
        const node = render(result, outcome);
        if (node instanceof Node) {
          const holder = el("div", { class: "component", "data-ui": outcome.ui });
          holder.append(node);
          return holder;
        }
      } catch (error) {
        console.error(`the component ${outcome.ui} failed`, error);
      }
    }
    return el("pre", { class: "json" }, pretty(result));
  }

  // ---- signing in ----

  async function start() {
    state.config = await (await fetch(document.body.dataset.config, { cache: "no-store" })).json();
    document.title = state.config.title;
    $("title").textContent = state.config.title;
    $("sign-in").addEventListener("submit", signIn);
    $("sign-out").addEventListener("click", signOut);
    $("call-form").addEventListener("submit", callTool);
    if (state.config.sign_in === "bearer_token" && !state.token) {
      showSignIn("");
      return;
    }
    await open();
  }

  function showSignIn(message) {
    $("sign-in-provider").hidden = state.config.sign_in !== "provider";
    $("console").hidden = true;
    $("sign-out").hidden = true;
    $("signed-in").textContent = "";
    $("sign-in").hidden = false;
    $("sign-in-error").textContent = message;
  }

  async function signIn(event) {
    event.preventDefault();
    state.token = $("token").value.trim();
    $("token").value = "";
    sessionStorage.setItem(TOKEN_KEY, state.token);
    await open();
  }

  async function signOut() {
    sessionStorage.removeItem(TOKEN_KEY);
    state.token = null;
    if (state.events) state.events.abort();
    if (state.config.sign_in === "provider") {
      // The session lives on the server; only it can end it (the cookie is HttpOnly).
      await fetch(`${document.body.dataset.base}/sign-out`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "{}",
        credentials: "same-origin",
      }).catch(() => null);
    }
    location.reload();
  }

  async function open() {
    try {
      state.me = await api("/me");
    } catch (error) {
      if (state.config.sign_in === "bearer_token" || state.config.sign_in === "provider") {
        sessionStorage.removeItem(TOKEN_KEY);
        state.token = null;
        showSignIn(`Not signed in: ${error.message}`);
      } else {
        $("signed-in").textContent = `Not signed in: ${error.message}`;
      }
      return;
    }
    $("sign-in").hidden = true;
    $("console").hidden = false;
    $("sign-out").hidden = state.config.sign_in === "session";
    $("signed-in").textContent = `${state.me.id} (${state.me.role})`;
    $("approvals-section").hidden = !state.me.approver;
    $("usage-section").hidden = !state.me.approver;
    if (state.me.approver) {
      $("usage-refresh").onclick = showUsage;
      showUsage();
    }
    await loadTools();
    listen();
  }

  function showUsage() {
    window.toolgateUsage.show(el, api, 7, $("usage"), $("usage-unused"), $("usage-note"));
  }

  // ---- waiting calls ----

  async function refreshApprovals() {
    if (!state.me.approver) return;
    let pending;
    try {
      pending = (await api("/approvals")).pending;
    } catch (error) {
      $("approvals-empty").textContent = `The waiting calls could not be read: ${error.message}`;
      $("approvals-empty").hidden = false;
      return;
    }
    const current = new Set(pending.map((call) => call.ticket_id));
    for (const [ticketId, card] of state.cards) {
      if (!current.has(ticketId) && !card.busy) {
        card.element.remove();
        state.cards.delete(ticketId);
      }
    }
    for (const call of pending) {
      if (!state.cards.has(call.ticket_id)) addCard(call);
    }
    $("approvals-empty").textContent = "Nothing is waiting.";
    $("approvals-empty").hidden = state.cards.size > 0;
  }

  function addCard(call) {
    const reason = el("input", {
      type: "text",
      class: "deny-reason",
      placeholder: "Reason (told to the caller if you deny)",
      maxlength: "500",
    });
    const approve = el("button", { type: "button", class: "approve", "data-action": "approve" }, "Approve");
    const deny = el("button", { type: "button", class: "deny", "data-action": "deny" }, "Deny");
    const expiry = el("span", { class: "expiry" });
    const status = el("p", { class: "status", role: "status" });
    const element = el(
      "article",
      { class: `approval risk-${call.risk || "unknown"}`, "data-ticket-id": call.ticket_id, "data-tool": call.tool },
      el(
        "header",
        el("h3", call.title || call.tool),
        call.title ? el("code", { class: "tool" }, call.tool) : null,
        el("span", { class: "risk" }, `risk: ${call.risk || "unknown"}`),
      ),
      call.description ? el("p", { class: "description" }, call.description) : null,
      el("p", { class: "reason" }, el("strong", "Why: "), call.reason),
      el(
        "p",
        { class: "meta" },
        "Asked by ",
        el("strong", { class: "caller" }, call.caller),
        call.requested ? ` at ${clock(call.requested * 1000)}` : "",
        " · ",
        expiry,
      ),
      el("h4", "Arguments"),
      el("pre", { class: "arguments" }, pretty(call.arguments)),
      call.review ? [el("h4", "What it will do"), el("pre", { class: "review" }, pretty(call.review))] : null,
      el("div", { class: "actions" }, reason, approve, deny),
      status,
    );
    const card = { element, call, busy: false, expiry, buttons: [approve, deny], status };
    approve.addEventListener("click", () => decide(card, "approve"));
    deny.addEventListener("click", () => decide(card, "deny", reason.value.trim()));
    state.cards.set(call.ticket_id, card);
    $("approvals").append(element);
    tick(card);
  }

  function tick(card) {
    const left = card.call.expires - Math.floor(Date.now() / 1000);
    if (left <= 0) {
      card.expiry.textContent = "expired";
      card.element.classList.add("expired");
      for (const button of card.buttons) button.disabled = true;
      return;
    }
    const minutes = Math.floor(left / 60);
    card.expiry.textContent = `expires at ${clock(card.call.expires * 1000)} (in ${minutes} min ${left % 60} s)`;
  }

  setInterval(() => {
    for (const card of state.cards.values()) if (!card.busy) tick(card);
  }, 1000);

  async function decide(card, action, reason) {
    card.busy = true;
    for (const button of card.buttons) button.disabled = true;
    card.status.textContent = action === "approve" ? "Approving…" : "Denying…";
    const body = { ticket: card.call.ticket };
    if (action === "deny") body.reason = reason || "no reason given";
    let outcome;
    try {
      outcome = await post(`/approvals/${action}`, body);
    } catch (error) {
      card.busy = false;
      card.status.textContent = `Not decided: ${error.message}`;
      card.element.classList.add("failed");
      if (error.status !== 409 && error.status !== 410) {
        for (const button of card.buttons) button.disabled = false;
      }
      return;
    }
    state.cards.delete(card.call.ticket_id);
    card.element.remove();
    addDecided(card.call, action, body.reason, outcome);
    $("approvals-empty").hidden = state.cards.size > 0;
  }

  function addDecided(call, action, reason, outcome) {
    const verdict =
      action === "deny"
        ? el("p", { class: "verdict denied" }, "Denied: ", el("span", { class: "denial" }, reason))
        : outcome.ok
          ? el("p", { class: "verdict executed" }, `Approved and executed in ${outcome.duration_ms.toFixed(1)} ms`)
          : el("p", { class: "verdict failed" }, `Approved; the call failed: ${outcome.error.code}: ${outcome.error.message}`);
    $("decided-heading").hidden = false;
    $("decided").prepend(
      el(
        "article",
        { class: `decided ${action}`, "data-ticket-id": call.ticket_id, "data-tool": call.tool },
        el("header", el("h3", call.title || call.tool), call.title ? el("code", { class: "tool" }, call.tool) : null),
        el("p", { class: "meta" }, "Asked by ", el("strong", call.caller)),
        verdict,
        action === "approve" && outcome.ok ? rendered(outcome.result, outcome) : null,
      ),
    );
  }

  // ---- the live feed ----

  function row(event) {
    const key = `${event.call_id}\u0000${event.tool}`;
    let entry = state.rows.get(key);
    if (entry && entry.finished && event.type === "call_requested") entry = null;
    if (!entry) {
      const status = el("span", { class: "status" });
      const detail = el("div", { class: "detail" });
      const element = el(
        "li",
        { class: "call", "data-call-id": event.call_id, "data-tool": event.tool },
        el("span", { class: "time" }, clock(event.time_ms)),
        el("code", { class: "tool" }, event.tool),
        status,
        detail,
      );
      entry = { element, status, detail, finished: false };
      state.rows.set(key, entry);
      $("feed").prepend(element);
      $("feed-empty").hidden = true;
      while ($("feed").children.length > FEED_LIMIT) $("feed").lastElementChild.remove();
    }
    return entry;
  }

  function show(entry, status, text, ...detail) {
    entry.element.dataset.status = status;
    entry.status.textContent = text;
    if (detail.length) entry.detail.replaceChildren(...detail.filter(Boolean));
  }

  function onEvent(event) {
    const mine = event.caller === state.me.id;
    switch (event.type) {
      case "call_requested":
        if (mine) {
          const entry = row(event);
          show(entry, "requested", event.needs_approval ? "requested · needs approval" : "requested",
            el("pre", { class: "arguments" }, pretty(event.arguments)));
        }
        break;
      case "approval_requested":
        if (mine) show(row(event), "waiting", `waiting for approval: ${event.reason}`);
        if (state.me.approver) refreshApprovals();
        break;
      case "approval_decided":
        if (mine) {
          const denied = event.decision === "approval_denied";
          show(row(event), denied ? "denied" : "approved", `${denied ? "denied" : "approved"} by ${event.decided_by}`);
        }
        if (state.me.approver) refreshApprovals();
        break;
      case "call_finished":
        if (mine) finished(event);
        break;
      case "lagged":
        refreshApprovals();
        break;
      default:
        break;
    }
  }

  function finished(event) {
    const entry = row(event);
    const took = `${event.duration_ms.toFixed(1)} ms`;
    if (event.ok) {
      entry.finished = true;
      show(entry, "executed", `executed · ${took}`, rendered(event.result, event));
    } else if (event.error.code === "approval_required") {
      show(entry, "waiting", "waiting for approval");
    } else {
      entry.finished = true;
      const status = event.error.code === "approval_denied" ? "denied" : "failed";
      show(entry, status, `${status} · ${took}`,
        el("p", { class: "error" }, el("code", event.error.code), " ", event.error.message));
    }
  }

  /** Server-sent events read with fetch, so a bearer token can go with them. */
  async function listen() {
    let wait = 1000;
    for (;;) {
      const controller = new AbortController();
      state.events = controller;
      try {
        const response = await fetch(`${state.config.api}/events`, {
          headers: headers({ Accept: "text/event-stream" }),
          credentials: "same-origin",
          cache: "no-store",
          signal: controller.signal,
        });
        if (response.status === 401 && state.config.sign_in === "bearer_token") {
          showSignIn("Signed out: sign in again");
          return;
        }
        if (!response.ok) throw new Error(`the server answered ${response.status}`);
        document.body.dataset.live = "on";
        $("live").textContent = "● live";
        wait = 1000;
        // What happened while nobody listened is read now.
        await refreshApprovals();
        await read(response.body);
      } catch (error) {
        if (controller.signal.aborted) return;
        console.warn("the event stream stopped", error);
      }
      document.body.dataset.live = "off";
      $("live").textContent = "○ reconnecting";
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, 15000);
    }
  }

  async function read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (!data) continue;
        try {
          onEvent(JSON.parse(data));
        } catch (error) {
          console.warn("an event could not be read", error);
        }
      }
    }
  }

  // ---- calling a tool ----

  let tools = [];
  let fieldProblem = () => "";

  async function loadTools() {
    const select = $("call-tool");
    try {
      ({ tools } = await api("/tools"));
      select.replaceChildren(...tools.map((tool) => el("option", { value: tool.name }, tool.title || tool.name)));
      select.onchange = showTool;
      showTool();
    } catch (error) {
      $("call-error").textContent = `The tools could not be read: ${error.message}`;
    }
  }

  /** The chosen tool's description and a field per parameter. */
  function showTool() {
    const tool = tools.find((t) => t.name === $("call-tool").value);
    const fields = $("call-fields");
    const legend = fields.querySelector("legend");
    const container = el("div", { class: "params" });
    fields.replaceChildren(legend, container);
    $("call-description").textContent = tool ? tool.description || "" : "";
    fieldProblem = window.toolgateCallForm.build(el, tool ? tool.input_schema : {}, container, $("call-arguments"));
  }

  let calls = 0;

  async function callTool(event) {
    event.preventDefault();
    $("call-error").textContent = "";
    if (fieldProblem()) {
      $("call-error").textContent = fieldProblem();
      return;
    }
    let args;
    try {
      args = JSON.parse($("call-arguments").value || "{}");
    } catch (error) {
      $("call-error").textContent = `The arguments are not JSON: ${error.message}`;
      return;
    }
    calls += 1;
    try {
      const id = `console-${Date.now()}-${calls}`;
      const outcome = await post("/tools/call", { id, name: $("call-tool").value, arguments: args });
      // Shown also when the event stream is down (the events update the same row).
      finished({ ...outcome, type: "call_finished", time_ms: Date.now() });
    } catch (error) {
      $("call-error").textContent = error.message;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    start().catch((error) => {
      document.body.replaceChildren(el("p", { class: "error" }, `The console could not start: ${error.message}`));
    });
  });
})();
