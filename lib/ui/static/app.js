// treeloop runner-ui: the page. Hand-written, no framework, no build step.
// The server pushes {kind, id} events over /events; the page refetches what
// changed from the REST API. Every piece of data reaches the DOM through
// textContent or attributes, never as HTML.
"use strict";

(() => {
  const $ = (sel) => document.querySelector(sel);

  // h(tag, attrs, ...children): a DOM element. attrs: class, text, on*,
  // dataset keys as data-x, anything else as an attribute.
  function h(tag, attrs, ...kids) {
    const svg = ["svg", "rect", "path", "line", "text", "circle", "title", "g", "polyline"].includes(tag);
    const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") el.setAttribute("class", v);
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }

  const state = {
    config: null,
    tree: null,        // the root node
    index: new Map(),  // id -> {node, parent, path}
    treeError: "",
    runState: null,    // /api/run-state
    iterations: [],    // /api/iterations
    runs: null,        // /api/runs
    expanded: new Set(),
    selectedNode: "",
    focusId: "",
    route: { name: "overview" },
    liveFile: "executor.log",
    liveEl: null,
    drafts: new Map(), // node id -> an answer being written
  };

  // ---- API ---------------------------------------------------------------

  async function api(path, opts) {
    const r = await fetch(path, Object.assign({ cache: "no-store" }, opts || {}));
    const type = r.headers.get("Content-Type") || "";
    const body = type.startsWith("application/json") ? await r.json() : await r.text();
    if (!r.ok) {
      const msg = body && body.message ? body.message : String(r.status);
      const e = new Error(msg);
      e.status = r.status;
      e.code = body && body.error;
      throw e;
    }
    return { body, headers: r.headers };
  }

  // refresh(name) coalesces: one fetch in flight per resource, and one more
  // after it when something changed meanwhile.
  const loaders = {
    tree: loadTree,
    runState: loadRunState,
    iterations: loadIterations,
    runs: loadRuns,
    tail: loadTail,
    view: renderView,
  };
  const inflight = {};
  function refresh(name) {
    const st = inflight[name] || (inflight[name] = { busy: false, again: false });
    if (st.busy) { st.again = true; return; }
    st.busy = true;
    Promise.resolve().then(loaders[name]).catch((e) => console.warn(name, e.message)).finally(() => {
      st.busy = false;
      if (st.again) { st.again = false; refresh(name); }
    });
  }

  async function loadTree() {
    try {
      const { body } = await api("/api/tree");
      state.tree = body;
      state.treeError = "";
      indexTree();
    } catch (e) {
      state.treeError = e.message;
    }
    renderTree();
    renderCounts();
    // The node's view and the overview's open questions come from the tree.
    if (state.route.name === "node" || state.route.name === "overview") refresh("view");
  }

  async function loadRunState() {
    try {
      state.runState = (await api("/api/run-state")).body;
    } catch (e) {
      state.runState = null;
    }
    renderHeader();
    renderTree();
    renderLive();
    refresh("tail");
  }

  // The iterations: the whole list on connecting (and on a reset); after
  // that, each event's iteration alone (/api/iterations?id=), so a page
  // left open costs what changed, not the run's length.
  let itersWhole = true;
  const itersPending = new Set();
  async function loadIterations() {
    try {
      if (itersWhole) {
        itersWhole = false;
        itersPending.clear();
        state.iterations = (await api("/api/iterations")).body.iterations;
      } else {
        const ids = [...itersPending];
        itersPending.clear();
        for (const id of ids) {
          upsertIteration(evKey(id), (await api("/api/iterations?id=" + encodeURIComponent(id))).body.iterations);
        }
      }
    } catch (e) {
      itersWhole = true; // what failed is read whole at the next event
      throw e;
    }
    renderTree();
    const r = state.route.name;
    if (r === "overview" || r === "iterations" || r === "chart" || r === "node") refresh("view");
    if (!running()) refresh("tail");
  }

  // upsertIteration puts rows (the one iteration key names, or none when
  // it is gone) in the list in the server's order (start, run, iter); a
  // later iteration of a run ends an earlier one's running, as the
  // server's list says it.
  function upsertIteration(key, rows) {
    const list = state.iterations.filter((it) => iterKey(it) !== key);
    for (const row of rows) {
      for (const it of list) {
        if (it.run === row.run && it.iter < row.iter && it.running) { it.running = false; it.status = "unfinished"; }
      }
      const last = list[list.length - 1];
      list.push(row);
      if (last && byStart(last, row) > 0) list.sort(byStart);
    }
    state.iterations = list;
  }
  function byStart(a, b) {
    return Date.parse(a.started_at) - Date.parse(b.started_at) || (a.run < b.run ? -1 : a.run > b.run ? 1 : a.iter - b.iter);
  }

  async function loadRuns() {
    state.runs = (await api("/api/runs")).body;
    if (state.route.name === "runs" || state.route.name === "run" || state.route.name === "overview") refresh("view");
  }

  // ---- the tree ----------------------------------------------------------

  function byOrder(a, b) {
    return a.order - b.order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  function indexTree() {
    state.index = new Map();
    const walk = (n, parent, path) => {
      const p = path ? path + "/" + n.id : n.id;
      n.children = (n.children || []).slice().sort(byOrder);
      let total = 1, passed = n.passes ? 1 : 0;
      for (const c of n.children) {
        const r = walk(c, n, p);
        total += r.total;
        passed += r.passed;
      }
      state.index.set(n.id, { node: n, parent, path: p, total, passed });
      return { total, passed };
    };
    if (state.tree && state.tree.id) walk(state.tree, null, "");
    if (state.expanded.size === 0 && state.tree) {
      state.expanded.add(state.tree.id);
      if (state.index.size <= 200) for (const c of state.tree.children) state.expanded.add(c.id);
    }
    const cur = currentNode();
    if (cur) for (let e = state.index.get(cur); e && e.parent; e = state.index.get(e.parent.id)) state.expanded.add(e.parent.id);
  }

  // selection is the leftmost open leaf (seed 000 §4.2), as tree-select.
  function selection() {
    let found = null;
    const walk = (n) => {
      if (n.passes) return false;
      if (!n.children.length) { found = n; return true; }
      return n.children.some(walk);
    };
    if (state.tree && state.tree.id) walk(state.tree);
    return found;
  }

  function running() {
    return state.runState && state.runState.running;
  }

  function currentNode() {
    const r = running();
    if (r) return r.node_id;
    const s = selection();
    return s ? s.id : "";
  }

  function nodeStatus(n) {
    if (n.passes) return "passed";
    if (n.waiting) return "waiting";
    if (!n.children.length && n.attempts >= n.max_attempts) return "stuck";
    return "open";
  }

  function renderTree() {
    const ul = $("#tree");
    const note = $("#tree-note");
    note.textContent = state.treeError ? state.treeError : "";
    note.className = state.treeError ? "err" : "muted";
    if (!state.tree || !state.tree.id) {
      if (!state.treeError) ul.replaceChildren(h("li", { class: "empty", text: "No tree yet (.runner/state/tree.json)." }));
      return;
    }
    const cur = currentNode();
    const focus = state.focusId || state.selectedNode || cur || state.tree.id;
    const item = (n, level) => {
      const st = nodeStatus(n);
      const leaf = !n.children.length;
      const open = !leaf && state.expanded.has(n.id);
      const e = state.index.get(n.id);
      const cls = "st-" + st + (n.id === cur ? " st-current" : "");
      const mark = st === "passed" ? "✓" : st === "stuck" ? "✕" : st === "waiting" ? "?" : n.id === cur ? "▶" : "○";
      const hot = n.attempts >= n.max_attempts && !n.passes;
      const li = h("li", {
        role: "treeitem", class: cls, "data-id": n.id, "aria-level": level,
        "aria-expanded": leaf ? null : String(open), "aria-selected": String(n.id === state.selectedNode),
        tabindex: n.id === focus ? "0" : "-1",
        title: e.path,
      },
        h("div", { class: "node" },
          h("span", { class: "twisty", text: leaf ? "" : open ? "▾" : "▸" }),
          h("span", { class: "mark", text: mark, "aria-label": st }),
          h("span", { class: "title", text: n.title || n.id }),
          leaf ? null : h("span", { class: "badge passed-count", text: `${e.passed - (n.passes ? 1 : 0)}/${e.total - 1} passed`, title: `${e.passed - (n.passes ? 1 : 0)} of the ${e.total - 1} nodes under it passed` }),
          leaf ? h("span", { class: "badge " + n.next, text: n.next }) : null,
          leaf || n.attempts ? h("span", { class: "att" + (hot ? " hot" : ""), text: n.attempts + "/" + n.max_attempts, title: `attempts ${n.attempts} of ${n.max_attempts}` }) : null));
      if (open) li.append(h("ul", { role: "group" }, n.children.map((c) => item(c, level + 1))));
      return li;
    };
    const hadFocus = ul.contains(document.activeElement);
    morphChildren(ul, [item(state.tree, 1)]);
    if (hadFocus) {
      const el = ul.querySelector('[tabindex="0"]');
      if (el) el.focus({ preventScroll: true });
    }
  }

  // morphChildren makes parent's children the nodes next, in place. An
  // element that stays (the same tag and, for a tree item, the same
  // data-id) keeps its identity and only has its attributes and text
  // updated: the tree re-renders at every event of a live run, and a
  // click, a hover or the focus on an item must not be lost to it. A tree
  // that did not change is not touched at all.
  function morphChildren(parent, next) {
    const keyed = new Map();
    for (const c of parent.children) if (c.dataset.id) keyed.set(c.dataset.id, c);
    next.forEach((b, i) => {
      const at = parent.childNodes[i] || null;
      const key = b.nodeType === Node.ELEMENT_NODE ? b.dataset.id || "" : "";
      const a = key ? keyed.get(key) : at;
      const same = a && a.nodeType === b.nodeType && a.nodeName === b.nodeName &&
        (a.nodeType !== Node.ELEMENT_NODE || (a.dataset.id || "") === key);
      if (!same) {
        parent.insertBefore(b, at);
        return;
      }
      if (a !== at) parent.insertBefore(a, at);
      if (a.nodeType !== Node.ELEMENT_NODE) {
        if (a.nodeValue !== b.nodeValue) a.nodeValue = b.nodeValue;
        return;
      }
      for (const { name } of Array.from(a.attributes)) if (!b.hasAttribute(name)) a.removeAttribute(name);
      for (const { name, value } of Array.from(b.attributes)) if (a.getAttribute(name) !== value) a.setAttribute(name, value);
      morphChildren(a, Array.from(b.childNodes));
    });
    while (parent.childNodes.length > next.length) parent.lastChild.remove();
  }

  // A click on a tree item's row opens the node, on its twisty folds it.
  function treeClick(ev) {
    const row = ev.target.closest(".node");
    const li = row && row.closest('[role="treeitem"]');
    if (!li) return;
    if (ev.target.classList.contains("twisty")) toggle(li.dataset.id); else openNode(li.dataset.id);
  }

  function toggle(id) {
    if (state.expanded.has(id)) state.expanded.delete(id); else state.expanded.add(id);
    state.focusId = id;
    renderTree();
  }

  function treeItems() {
    return Array.from($("#tree").querySelectorAll('[role="treeitem"]'));
  }

  function focusTreeItem(el) {
    if (!el) return;
    for (const x of $("#tree").querySelectorAll('[tabindex="0"]')) x.setAttribute("tabindex", "-1");
    el.setAttribute("tabindex", "0");
    state.focusId = el.dataset.id;
    el.focus();
    el.scrollIntoView({ block: "nearest" });
  }

  function treeKey(ev) {
    const el = ev.target.closest('[role="treeitem"]');
    if (!el) return false;
    const items = treeItems();
    const i = items.indexOf(el);
    const id = el.dataset.id;
    const e = state.index.get(id);
    switch (ev.key) {
      case "ArrowDown": case "j": focusTreeItem(items[i + 1]); return true;
      case "ArrowUp": case "k": focusTreeItem(items[i - 1]); return true;
      case "Home": focusTreeItem(items[0]); return true;
      case "End": focusTreeItem(items[items.length - 1]); return true;
      case "ArrowRight": case "l":
        if (e && e.node.children.length) {
          if (!state.expanded.has(id)) toggle(id);
          else focusTreeItem(el.querySelector('[role="treeitem"]'));
        }
        return true;
      case "ArrowLeft": case "h":
        if (state.expanded.has(id) && e.node.children.length) toggle(id);
        else if (e && e.parent) focusTreeItem($("#tree").querySelector(`[data-id="${CSS.escape(e.parent.id)}"]`));
        return true;
      case "Enter": case " ": openNode(id); return true;
    }
    return false;
  }

  function openNode(id) {
    state.selectedNode = id;
    state.focusId = id;
    location.hash = "#/node/" + encodeURIComponent(id);
  }

  // ---- header ------------------------------------------------------------

  function renderHeader() {
    const rs = state.runState && state.runState.run_state;
    $("#run-id").textContent = rs && rs.run_id ? rs.run_id : "no run";
    const c = state.runState && state.runState.cancel;
    const note = $("#cancel-note");
    note.hidden = !c;
    note.textContent = c ? `cancel requested ${c.by ? "by " + c.by : "by an unknown hand"} at ${fmtTime(c.at)}` : "";
    note.title = c ? "The run stops before its next iteration; runner-cancel --clear withdraws the request." : "";
    const cfg = state.config || {};
    // Writes need a browser signed in with the one-time login link that
    // runner-ui printed on its terminal (the session cookie is HttpOnly:
    // the server says whether this page carries it).
    $("#sign-in").hidden = !((cfg.allow_cancel || cfg.allow_answer) && !cfg.signed_in);
    const btn = $("#cancel");
    btn.hidden = !(cfg.allow_cancel && cfg.signed_in);
    if (state.runState && state.runState.cancel_requested) {
      btn.textContent = "Cancel requested";
      btn.disabled = true;
    } else if (btn.dataset.confirm !== "1") {
      btn.textContent = "Cancel run";
      btn.disabled = false;
    }
  }

  function renderCounts() {
    const el = $("#counts");
    if (!state.tree || !state.tree.id) { el.textContent = ""; return; }
    let passed = 0, open = 0, stuck = 0, waiting = 0;
    for (const { node } of state.index.values()) {
      const s = nodeStatus(node);
      if (s === "passed") passed++; else if (s === "stuck") stuck++; else if (s === "waiting") waiting++; else open++;
    }
    el.textContent = `${state.index.size} nodes · ${passed} passed · ${open} open · ${stuck} stuck` + (waiting ? ` · ${waiting} waiting` : "");
  }

  function setupCancel() {
    const btn = $("#cancel");
    btn.addEventListener("click", async () => {
      if (btn.dataset.confirm !== "1") {
        btn.dataset.confirm = "1";
        btn.textContent = "Confirm cancel?";
        setTimeout(() => { btn.dataset.confirm = ""; renderHeader(); }, 5000);
        return;
      }
      btn.dataset.confirm = "";
      btn.disabled = true;
      try {
        await api("/api/cancel", { method: "POST" });
        btn.textContent = "Cancel requested";
      } catch (e) {
        btn.textContent = "Cancel failed";
        btn.title = e.message;
        btn.disabled = false;
        signedOut(e);
      }
    });
  }

  // signedOut shows the sign-in note again when a write was refused for
  // want of a session (runner-ui was restarted, say).
  function signedOut(e) {
    if (e.status !== 401 || !state.config) return;
    state.config.signed_in = false;
    renderHeader();
    refresh("view");
  }

  // ---- formatting --------------------------------------------------------

  const fmtInt = (n) => (n || 0).toLocaleString("en-US");
  function fmtDur(ms) {
    if (!ms) return "";
    const s = Math.round(ms / 1000);
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " m " + (s % 60) + " s";
    return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " m";
  }
  const fmtCost = (c) => (c ? "$" + c.toFixed(c < 1 ? 4 : 2) : "");
  function fmtTime(t) {
    if (!t) return "";
    const d = new Date(t);
    return isNaN(d) ? t : d.toLocaleString("en-GB", { hour12: false });
  }
  const iterStatus = (it) => (it.running ? "running" : it.result || it.status);
  const tokensOf = (it) => (it.tokens ? it.tokens.input + it.tokens.output : 0);
  const iterKey = (it) => it.run + "/" + it.iter;
  // evKey turns an event's id, "run/0007" (the directory), into "run/7".
  const evKey = (id) => { const i = (id || "").lastIndexOf("/"); return i < 0 ? id : id.slice(0, i) + "/" + Number(id.slice(i + 1)); };

  // ---- routing -----------------------------------------------------------

  function parseRoute() {
    const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
    switch (parts[0]) {
      case "iterations": return { name: "iterations" };
      case "runs": return parts[1] ? { name: "run", id: parts[1] } : { name: "runs" };
      case "chart": return { name: "chart" };
      case "node": return { name: "node", id: parts[1] || "" };
      case "iter": return { name: "iter", run: parts[1], iter: Number(parts[2]), tab: parts[3] || "summary" };
      default: return { name: "overview" };
    }
  }

  function onRoute() {
    const prev = state.route;
    state.route = parseRoute();
    const tab = { overview: "overview", iterations: "iterations", iter: "iterations", runs: "runs", run: "runs", chart: "chart", node: "" }[state.route.name];
    for (const a of document.querySelectorAll(".tabs a")) a.setAttribute("aria-selected", String(a.dataset.tab === tab));
    if (state.route.name === "node") {
      state.selectedNode = state.route.id;
      renderTree();
    }
    if ((state.route.name === "runs" || state.route.name === "run") && !state.runs) refresh("runs");
    const same = prev.name === state.route.name && prev.id === state.route.id && prev.run === state.route.run && prev.iter === state.route.iter;
    if (!same) $("#view").scrollTop = 0;
    refresh("view");
  }

  async function renderView() {
    const r = state.route;
    const view = $("#view");
    let content;
    try {
      switch (r.name) {
        case "iterations": content = viewIterations(state.iterations.slice().reverse(), true); break;
        case "runs": content = viewRuns(); break;
        case "run": content = await viewRun(r.id); break;
        case "chart": content = h("div", null, h("h3", { text: "Tokens and cost per iteration" }), chart(state.iterations)); break;
        case "node": content = await viewNode(r.id); break;
        case "iter": content = await viewIter(r); break;
        default: content = viewOverview();
      }
    } catch (e) {
      content = h("div", { class: "err", text: e.message });
    }
    if (r !== state.route) return; // the route changed while loading
    const keep = focusPath(view);
    view.replaceChildren(content);
    restoreFocus(view, keep);
    if (r.name === "overview") {
      renderLive();
      const box = live("#live-tail-box");
      box.scrollTop = box.scrollHeight;
    }
  }

  // A view re-rendered by an event keeps the focused row focused.
  function focusPath(view) {
    const a = document.activeElement;
    return a && view.contains(a) && a.dataset && a.dataset.key ? a.dataset.key : "";
  }
  function restoreFocus(view, key) {
    if (!key) return;
    const el = view.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (el) el.focus({ preventScroll: true });
  }

  // ---- views -------------------------------------------------------------

  function viewOverview() {
    const recent = state.iterations.slice(-12).reverse();
    return h("div", null,
      pauseBanner(),
      viewQuestions(),
      state.liveEl,
      h("h3", null, "Recent iterations ", h("a", { href: "#/iterations", text: "all" })),
      viewIterations(recent, false),
      h("h3", { text: "Tokens and cost" }),
      chart(state.iterations));
  }

  // waitingNodes are the leaves that wait for an operator's answer, in the
  // tree's order.
  function waitingNodes() {
    const out = [];
    const walk = (n) => {
      if (n.passes) return;
      if (n.waiting) out.push(n);
      n.children.slice().sort(byOrder).forEach(walk);
    };
    if (state.tree && state.tree.id) walk(state.tree);
    return out;
  }

  // viewQuestions lists the open questions, each with an answer form when
  // the server allows answers.
  function viewQuestions() {
    const qs = waitingNodes();
    if (!qs.length) return null;
    return h("div", { id: "questions" },
      h("h3", { text: `Open questions (${qs.length})` }),
      qs.map((n) => h("div", { class: "question", "data-question": n.id },
        h("div", null, h("span", { class: "s-waiting", text: "? " }), h("a", { href: "#/node/" + encodeURIComponent(n.id), text: n.title || n.id }), " ", h("code", { text: n.id })),
        h("pre", { text: n.waiting }),
        answerForm(n.id))));
  }

  // answerForm posts an operator's answer (runner-ui --allow-answer): the
  // server hands it to tree-edit answer, which commits it, or queues it
  // while a runner works. A draft survives the view's redraws.
  function answerForm(id) {
    if (!(state.config && state.config.allow_answer)) return null;
    if (!state.config.signed_in) {
      return h("div", { class: "muted", "data-sign-in": id, text: "To answer here, sign in: open the one-time login link runner-ui printed on its terminal." });
    }
    const ta = h("textarea", { rows: "3", "aria-label": "Answer to " + id, "data-key": "answer:" + id, placeholder: "Your answer" });
    ta.value = state.drafts.get(id) || "";
    ta.addEventListener("input", () => state.drafts.set(id, ta.value));
    const msg = h("span", { class: "muted", "data-answer-status": id });
    const btn = h("button", { type: "button", "data-answer": id, onclick: async () => {
      btn.disabled = true;
      try {
        const r = (await api("/api/answer", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ id, answer: ta.value }),
        })).body;
        state.drafts.delete(id);
        msg.textContent = r.answer === "queued" ? "Queued: the runner commits it before its next iteration." : "Committed.";
      } catch (e) {
        msg.textContent = "Not answered: " + e.message;
        btn.disabled = false;
        signedOut(e);
      }
    } }, "Answer");
    return h("div", { class: "answer-form" }, ta, h("div", null, btn, " ", msg));
  }

  // pauseBanner says when a usage limit pauses the current run, and until
  // when.
  function pauseBanner() {
    const rs = state.runState && state.runState.run_state;
    if (!state.runs || !rs) return null;
    const recs = state.runs.runs.filter((r) => r.run_id === rs.run_id);
    const r = recs[recs.length - 1];
    if (!r || r.status !== "paused" || !r.pause) return null;
    const until = r.pause.until ? ` until ${fmtTime(r.pause.until)}` : "";
    return h("div", { class: "banner", id: "pause-banner" },
      h("span", { class: "s-paused", text: "paused" }), `${until} · ${r.pause.reason} · ${r.pause.count} pause(s), ${fmtDur(r.pause.total_secs * 1000) || "0 s"} so far`);
  }

  // The live panel is one element kept across renders, so its text and
  // scroll position survive the events that redraw the rest.
  const live = (sel) => state.liveEl.querySelector(sel);

  function renderLive() {
    const what = live("#live-what");
    const r = running();
    if (r) {
      what.replaceChildren(
        h("span", { class: "s-running", text: "● running " }),
        h("a", { href: `#/iter/${encodeURIComponent(r.run)}/${r.iter}`, text: `iteration ${r.iter}` }),
        ` on `, h("a", { href: "#/node/" + encodeURIComponent(r.node_id), text: r.node_id }),
        ` (${r.mode}, attempt ${r.attempts_before + 1}/${r.max_attempts}) since ${fmtTime(r.started_at)}`);
    } else {
      const last = state.iterations[state.iterations.length - 1];
      what.replaceChildren(h("span", { class: "muted", text: last ? `idle · last: iteration ${last.iter} on ${last.node_id} ${iterStatus(last)}` : "idle · no iteration yet" }));
    }
  }

  // loadTail fetches the last lines of the running iteration's log: the
  // guard's once it has started, else the agent's, an agent CLI's JSON
  // events in agent-exec's compact view (a line per message or tool call,
  // never the raw events). Between iterations it shows the end of the last
  // iteration's guard log (or agent log).
  async function loadTail() {
    const pre = live("#live-tail");
    const fileEl = live("#live-file");
    const r = running() || state.iterations[state.iterations.length - 1];
    if (!r) {
      fileEl.textContent = "";
      pre.textContent = "";
      return;
    }
    const base = `/api/iterations/${encodeURIComponent(r.run)}/${r.iter}/`;
    const n = (state.config && state.config.tail_lines) || 120;
    const agentLog = "executor.log";
    const files = running() && state.liveFile !== "guard.log" ? [agentLog] : ["guard.log", agentLog];
    let text = "";
    let file = "";
    for (const f of files) {
      try {
        text = (await api(base + f + "?tail=" + n + (f === agentLog ? "&view=compact" : ""))).body;
        file = f === agentLog ? "agent" : f;
        break;
      } catch (e) { /* not there (yet): the next */ }
    }
    const box = live("#live-tail-box");
    const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 30;
    pre.dataset.iter = iterKey(r);
    pre.dataset.file = file;
    pre.textContent = text;
    fileEl.textContent = file ? `${file} · last ${n} lines` : "";
    if (atEnd) box.scrollTop = box.scrollHeight;
  }

  function statusCell(s) {
    return h("td", { class: "s-" + s, text: s });
  }

  function viewIterations(list, full) {
    if (!list.length) return h("div", { class: "empty", text: "No iterations yet." });
    // Columns as wide as their content; the node's takes the rest.
    const cols = ["run", "iter", "node", "mode", "status", "guard", "duration", "tokens", "cost"];
    return h("table", { class: "iters" },
      h("thead", null, h("tr", null, cols.map((c) => h("th", { class: ["iter", "duration", "tokens", "cost"].includes(c) ? "num" : c === "node" ? "grow" : "", text: c })))),
      h("tbody", null, list.map((it) => h("tr", {
        tabindex: "0", "data-key": "it:" + iterKey(it), "data-href": `#/iter/${encodeURIComponent(it.run)}/${it.iter}`,
        onclick: () => { location.hash = `#/iter/${encodeURIComponent(it.run)}/${it.iter}`; },
      },
        h("td", { text: it.run, title: it.run }),
        h("td", { class: "num", text: it.iter }),
        h("td", { class: "grow", text: it.node_id, title: it.node_path }),
        h("td", { text: it.mode }),
        statusCell(iterStatus(it)),
        h("td", { class: "s-" + it.guard, text: it.guard || "" }),
        h("td", { class: "num", text: it.running ? "…" : fmtDur(it.duration_ms) }),
        h("td", { class: "num", text: tokensOf(it) ? fmtInt(tokensOf(it)) : "" }),
        h("td", { class: "num", text: fmtCost(it.cost_usd) })))));
  }

  function viewRuns() {
    if (!state.runs) return h("div", { class: "empty", text: "Loading runs…" });
    const runs = state.runs.runs.slice().reverse();
    const probs = state.runs.problems.map((p) => h("div", { class: "err", text: p }));
    if (!runs.length) return h("div", null, h("div", { class: "empty", text: "No run records yet (.runner/runs/)." }), probs);
    // Columns as wide as their content; the goal takes the rest.
    const cols = ["run", "status", "started", "duration", "iterations", "nodes", "tokens", "cost", "goal"];
    return h("div", null, probs, h("table", { class: "runs" },
      h("thead", null, h("tr", null, cols.map((c) => h("th", { class: ["duration", "iterations", "tokens", "cost"].includes(c) ? "num" : c === "goal" ? "grow" : "", text: c })))),
      h("tbody", null, runs.map((r) => h("tr", {
        tabindex: "0", "data-key": "run:" + r.id, "data-href": "#/runs/" + encodeURIComponent(r.id),
        onclick: () => { location.hash = "#/runs/" + encodeURIComponent(r.id); },
      },
        h("td", { text: r.id, title: r.goal_title }),
        statusCell(r.status),
        h("td", { text: fmtTime(r.started_at) }),
        h("td", { class: "num", text: r.finished_at ? fmtDur(new Date(r.finished_at) - new Date(r.started_at)) : "…" }),
        h("td", { class: "num", text: r.iterations }),
        h("td", { text: `${r.nodes.passed}/${r.nodes.total} passed` + (r.nodes.stuck ? `, ${r.nodes.stuck} stuck` : "") }),
        h("td", { class: "num", text: fmtInt(r.usage.input_tokens + r.usage.output_tokens) }),
        h("td", { class: "num", text: fmtCost(r.usage.cost_usd) }),
        h("td", { class: "grow", text: r.goal_title, title: r.goal_title }))))));
  }

  async function viewRun(id) {
    const r = (await api("/api/runs/" + encodeURIComponent(id))).body;
    const iters = state.iterations.filter((it) => it.run === id);
    return h("div", null,
      h("h3", null, "Run ", h("code", { text: r.id }), " ", h("span", { class: "s-" + r.status, text: r.status })),
      h("dl", { class: "kv" },
        h("dt", { text: "goal" }), h("dd", { text: r.goal_title }),
        h("dt", { text: "branch" }), h("dd", { text: r.branch }),
        h("dt", { text: "reason" }), h("dd", { text: r.reason || "–" }),
        h("dt", { text: "started" }), h("dd", { text: fmtTime(r.started_at) }),
        h("dt", { text: "finished" }), h("dd", { text: r.finished_at ? fmtTime(r.finished_at) : "–" }),
        h("dt", { text: "iterations" }), h("dd", { text: r.iterations + (r.budgets.max_iterations ? " of " + r.budgets.max_iterations : "") }),
        h("dt", { text: "nodes" }), h("dd", { text: `${r.nodes.total} total, ${r.nodes.passed} passed, ${r.nodes.open} open, ${r.nodes.stuck} stuck` }),
        h("dt", { text: "usage" }), h("dd", { text: `${fmtInt(r.usage.input_tokens)} in, ${fmtInt(r.usage.output_tokens)} out, ${fmtInt(r.usage.cached_tokens)} cached, ${fmtCost(r.usage.cost_usd) || "$0"}` }),
        h("dt", { text: "runner" }), h("dd", { text: `pid ${r.runner.pid} on ${r.runner.host}` }),
        r.pause ? h("dt", { text: "pauses" }) : null,
        r.pause ? h("dd", { text: `${r.pause.count} on usage limits, ${fmtDur(r.pause.total_secs * 1000) || "0 s"} in all` + (r.pause.until ? `; paused until ${fmtTime(r.pause.until)} (${r.pause.reason})` : "") }) : null),
      r.log.length ? h("div", null, h("h3", { text: "Log" }), h("pre", { class: "logbox", text: r.log.map((e) => `${e.at} ${e.kind}: ${e.message}`).join("\n") })) : null,
      h("h3", { text: "Iterations" }), viewIterations(iters.slice().reverse(), true),
      h("h3", { text: "Tokens and cost" }), chart(iters));
  }

  async function viewNode(id) {
    const e = state.index.get(id);
    if (!e) return h("div", { class: "empty", text: state.tree ? `No node ${id} in the tree.` : "Loading…" });
    const n = e.node;
    const iters = state.iterations.filter((it) => it.node_id === id);
    const last = iters[iters.length - 1];
    let guard = null;
    if (last) {
      const base = `/api/iterations/${encodeURIComponent(last.run)}/${last.iter}/`;
      let text;
      try { text = (await api(base + "guard.log?tail=200")).body; } catch (err) { text = null; }
      guard = h("div", null,
        h("h3", null, "Guard log of ", h("a", { href: `#/iter/${encodeURIComponent(last.run)}/${last.iter}`, text: `iteration ${last.iter}` })),
        text === null ? h("div", { class: "empty", text: "The guard did not run in that iteration." }) : h("pre", { class: "logbox", id: "node-guard-log", text: text || "(empty)" }));
    }
    let artifacts = null;
    try {
      const a = (await api(`/api/nodes/${encodeURIComponent(id)}/artifacts`)).body;
      if (a.files.length) {
        artifacts = h("div", null, h("h3", { text: `Artifacts (${a.files.length}, ${fmtBytes(a.bytes)})` }),
          h("ul", { id: "node-artifacts" }, a.files.map((f) => h("li", null,
            h("a", { href: `/api/nodes/${encodeURIComponent(id)}/artifacts/${f.name.split("/").map(encodeURIComponent).join("/")}`, target: "_blank", rel: "noopener", text: f.name }),
            ` (${fmtBytes(f.bytes)})`))));
      }
    } catch (err) { artifacts = null; }
    const st = nodeStatus(n);
    const answers = n.answers || [];
    return h("div", null,
      h("h3", null, h("span", { class: "s-" + st, text: st === "passed" ? "✓ " : st === "stuck" ? "✕ " : st === "waiting" ? "? " : "" }), n.title || n.id),
      h("dl", { class: "kv" },
        h("dt", { text: "id" }), h("dd", null, h("code", { text: n.id })),
        h("dt", { text: "path" }), h("dd", { text: e.path }),
        h("dt", { text: "status" }), h("dd", { class: "s-" + st, text: st + (id === currentNode() ? " (current)" : "") }),
        h("dt", { text: "next" }), h("dd", { text: n.next }),
        h("dt", { text: "attempts" }), h("dd", { text: `${n.attempts}/${n.max_attempts}` }),
        n.evidence ? h("dt", { text: "evidence" }) : null,
        n.evidence ? h("dd", { id: "node-evidence", text: n.evidence === "proposed-suite" ? "suite, proposed by the agent that created it" : n.evidence }) : null,
        n.children.length ? h("dt", { text: "children" }) : null,
        n.children.length ? h("dd", { text: `${n.children.length} (${e.passed - (n.passes ? 1 : 0)} of ${e.total - 1} below passed)` }) : null),
      n.waiting ? h("div", { class: "question" }, h("h3", { text: "Waits for an answer to" }), h("pre", { text: n.waiting }), answerForm(n.id)) : null,
      answers.length ? h("div", null, h("h3", { text: `Operator's answers (${answers.length})` }),
        answers.map((a, i) => h("div", { class: "qa" }, h("div", { class: "muted", text: `Question ${i + 1}` }), h("pre", { text: a.question }), h("div", { class: "muted", text: "Answer" }), h("pre", { text: a.answer })))) : null,
      h("h3", { text: "Goal" }), h("pre", { text: n.goal }),
      h("h3", { text: "Acceptance" }),
      n.acceptance.length ? h("ul", null, n.acceptance.map((a) => h("li", { text: a }))) : h("div", { class: "empty", text: "none" }),
      artifacts,
      h("h3", { text: `Iterations on this node (${iters.length})` }),
      viewIterations(iters.slice().reverse(), true),
      guard);
  }

  const iterTabs = [
    ["summary", "Summary"], ["prompt", "Prompt"], ["answer", "Answer"], ["guard", "Guard log"],
    ["executor", "Agent log"], ["events", "Events"], ["diff", "Diff"],
  ];
  const tabFile = { prompt: "prompt.md", guard: "guard.log", executor: "executor.log", events: "events.jsonl", diff: "diff.patch" };

  async function viewIter(r) {
    const base = `/api/iterations/${encodeURIComponent(r.run)}/${r.iter}`;
    const d = (await api(base)).body;
    const meta = d.meta || {};
    const begin = d.begin || {};
    const sum = state.iterations.find((it) => it.run === r.run && it.iter === r.iter) || {};
    const files = new Map(d.files.map((f) => [f.name, f.size]));
    const tabs = h("div", { class: "subtabs", role: "tablist" }, iterTabs.map(([k, label]) => {
      const f = tabFile[k];
      const disabled = f && !files.has(f);
      return h("button", {
        type: "button", role: "tab", "aria-selected": String(k === r.tab), disabled, "data-key": "tab:" + k,
        onclick: () => { location.hash = `#/iter/${encodeURIComponent(r.run)}/${r.iter}/${k}`; },
      }, label + (f && files.has(f) ? ` (${fmtBytes(files.get(f))})` : ""));
    }));
    let body;
    if (r.tab === "summary") {
      const a = d.agent || {};
      const g = d.guard || {};
      const u = a.usage || {};
      body = h("dl", { class: "kv" },
        h("dt", { text: "node" }), h("dd", null, h("a", { href: "#/node/" + encodeURIComponent(meta.node_id || begin.node_id), text: meta.node_path || begin.node_path })),
        h("dt", { text: "mode" }), h("dd", { text: meta.mode || begin.mode }),
        h("dt", { text: "status" }), h("dd", { class: "s-" + iterStatus(sum), text: d.meta ? `${meta.status} → ${meta.result}` : "running" }),
        h("dt", { text: "guard" }), h("dd", { class: "s-" + meta.guard, text: meta.guard || "–" }),
        h("dt", { text: "attempts" }), h("dd", { text: d.meta ? `${meta.attempts_before} → ${meta.attempts_after} of ${meta.max_attempts}` : `${begin.attempts} of ${begin.max_attempts}` }),
        h("dt", { text: "started" }), h("dd", { text: fmtTime(meta.started_at || begin.started_at) }),
        h("dt", { text: "duration" }), h("dd", { text: fmtDur(meta.duration_ms) || "…" }),
        h("dt", { text: "agent" }), h("dd", { text: a.backend ? `${a.backend}${a.model ? " " + a.model : ""}${a.cli_version ? " (" + a.cli_version + ")" : ""}, class ${a.class}${a.message ? ": " + a.message : ""}` : "–" }),
        h("dt", { text: "tokens" }), h("dd", { text: a.usage ? `${fmtInt(u.input_tokens)} in, ${fmtInt(u.output_tokens)} out, ${fmtInt(u.cached_tokens)} cached` : "–" }),
        h("dt", { text: "cost" }), h("dd", { text: fmtCost(u.cost_usd) || "–" }),
        h("dt", { text: "guard run" }), h("dd", { text: g.outcome ? `${g.outcome}, exit ${g.exit_code}, ${fmtDur(g.duration_ms) || "0 s"}` : "–" }),
        h("dt", { text: "evidence" }), h("dd", { id: "iter-evidence", text: evidenceText(g.evidence) }),
        h("dt", { text: "reasons" }), h("dd", { text: (meta.reasons || []).join("; ") || "–" }),
        h("dt", { text: "commit" }), h("dd", null, h("code", { text: meta.commit || "–" })));
    } else if (r.tab === "answer") {
      body = d.output ? h("pre", { class: "logbox", text: JSON.stringify(d.output, null, 2) }) : h("div", { class: "empty", text: "No output.json." });
    } else {
      const f = tabFile[r.tab];
      if (!files.has(f)) {
        body = h("div", { class: "empty", text: `No ${f} in this iteration.` });
      } else {
        const lines = r.tab === "diff" ? 5000 : 2000;
        const url = `${base}/${f}?tail=${lines}` + (r.tab === "events" ? "&view=compact" : "");
        const res = await api(url);
        const text = res.body;
        const size = Number(res.headers.get("X-File-Size") || 0);
        const off = Number(res.headers.get("X-Tail-Offset") || 0);
        const note = h("div", { class: "note", text: off > 0 ? `The last ${lines} lines of ${fmtBytes(size)}. ` : "" },
          off > 0 ? h("a", { href: `${base}/${f}?view=` + (r.tab === "events" ? "compact" : "text"), target: "_blank", text: "whole file" }) : null);
        body = h("div", null, note, r.tab === "diff" ? diffView(text) : h("pre", { class: "logbox", id: "iter-" + r.tab, text: text || "(empty)" }));
      }
    }
    return h("div", null,
      h("h3", null, `Iteration ${r.iter} `, h("span", { class: "muted", text: `run ${r.run}` })),
      tabs, body);
  }

  // evidenceText is guard.json's evidence record (tests by name) on one
  // line: how the pass reads (the runner's own words, in the record), the
  // counts, the tests that passed before, the witnesses or what failed.
  function evidenceText(ev) {
    if (!ev) return "–";
    const missing = ev.missing || [];
    const parts = [ev.held ? ev.reads || "held" : "not held",
      [`${ev.passed} passed`, ev.failed ? `${ev.failed} failed` : "", ev.errors ? `${ev.errors} errors` : "", ev.skipped ? `${ev.skipped} skipped` : ""].filter(Boolean).join(", ")];
    if (ev.pass_to_pass) parts.push(`${ev.pass_to_pass - missing.length} of ${ev.pass_to_pass} passed before`);
    if (ev.witness && (ev.witness.tests || []).length) parts.push("witness: " + ev.witness.tests.join(", "));
    if (missing.length) parts.push("did not pass again: " + missing.join(", "));
    if ((ev.failing || []).length) parts.push("failing: " + ev.failing.join(", "));
    return parts.join("; ");
  }

  function fmtBytes(n) {
    if (n < 1024) return n + " B";
    if (n < 1 << 20) return (n / 1024).toFixed(1) + " KiB";
    return (n / (1 << 20)).toFixed(1) + " MiB";
  }

  function diffView(text) {
    if (!text) return h("div", { class: "empty", text: "No changes." });
    const pre = h("pre", { class: "logbox diff", id: "iter-diff" });
    const frag = document.createDocumentFragment();
    for (const line of text.split("\n")) {
      let cls = "";
      if (line.startsWith("diff --git") || line.startsWith("+++ ") || line.startsWith("--- ") || line.startsWith("index ")) cls = "meta";
      else if (line.startsWith("@@")) cls = "hunk";
      else if (line.startsWith("+")) cls = "add";
      else if (line.startsWith("-")) cls = "del";
      frag.append(cls ? h("span", { class: cls, text: line }) : line + "\n");
    }
    pre.append(frag);
    return pre;
  }

  // chart: tokens per iteration as stacked bars (input, output), cost as a
  // line on its own scale. Inline SVG, fixed height.
  function chart(iters) {
    const W = 900, H = 240, L = 56, R = 56, T = 14, B = 28;
    const svg = h("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", role: "img", "aria-label": "Tokens and cost per iteration" });
    const legend = h("div", { class: "legend" },
      h("span", null, h("span", { class: "sw in" }), "input tokens"),
      h("span", null, h("span", { class: "sw out" }), "output tokens"),
      h("span", null, h("span", { class: "sw cost" }), "cost (USD)"));
    if (!iters.some((it) => tokensOf(it) || it.cost_usd)) {
      svg.append(h("text", { x: W / 2, y: H / 2, "text-anchor": "middle", text: iters.length ? noUsage(iters) : "No iterations yet" }));
      return h("div", null, legend, svg);
    }
    const maxTok = Math.max(1, ...iters.map(tokensOf));
    const maxCost = Math.max(0, ...iters.map((it) => it.cost_usd || 0));
    const pw = W - L - R, ph = H - T - B;
    const bw = pw / iters.length;
    svg.append(h("line", { class: "ax", x1: L, y1: T + ph, x2: L + pw, y2: T + ph }));
    svg.append(h("text", { x: L - 6, y: T + 8, "text-anchor": "end", text: fmtShort(maxTok) }));
    svg.append(h("text", { x: L - 6, y: T + ph, "text-anchor": "end", text: "0" }));
    if (maxCost > 0) svg.append(h("text", { x: L + pw + 6, y: T + 8, text: "$" + maxCost.toFixed(maxCost < 1 ? 3 : 2) }));
    const pts = [];
    iters.forEach((it, i) => {
      const x = L + i * bw;
      const hin = (it.tokens ? it.tokens.input : 0) / maxTok * ph;
      const hout = (it.tokens ? it.tokens.output : 0) / maxTok * ph;
      const g = h("g", null, h("title", { text: `${it.run} #${it.iter} ${it.node_id}: ${fmtInt(tokensOf(it))} tokens, ${fmtCost(it.cost_usd) || "$0"}` }));
      g.append(h("rect", { class: "in", x: x + bw * 0.1, y: T + ph - hin, width: Math.max(bw * 0.8, 0.5), height: hin }));
      g.append(h("rect", { class: "out", x: x + bw * 0.1, y: T + ph - hin - hout, width: Math.max(bw * 0.8, 0.5), height: hout }));
      svg.append(g);
      if (maxCost > 0) pts.push(`${x + bw / 2},${T + ph - (it.cost_usd || 0) / maxCost * ph}`);
    });
    if (pts.length) {
      svg.append(h("polyline", { class: "cost", points: pts.join(" ") }));
      if (iters.length <= 60) for (const p of pts) { const [cx, cy] = p.split(","); svg.append(h("circle", { class: "dot", cx, cy, r: 3 })); }
    }
    const step = Math.max(1, Math.ceil(iters.length / 12));
    iters.forEach((it, i) => { if (i % step === 0) svg.append(h("text", { x: L + i * bw + bw / 2, y: H - 8, "text-anchor": "middle", text: it.iter })); });
    return h("div", null, legend, svg);
  }
  // noUsage says why the chart is empty: the backends of these iterations
  // reported no tokens.
  function noUsage(iters) {
    const backends = [...new Set(iters.map((it) => it.backend).filter(Boolean))];
    if (!backends.length) return "No token usage reported: no agent session ran";
    return `No token usage reported by the ${backends.join(", ")} backend${backends.length > 1 ? "s" : ""}`;
  }
  function fmtShort(n) {
    return n >= 1e6 ? (n / 1e6).toFixed(1) + "M" : n >= 1e3 ? (n / 1e3).toFixed(1) + "k" : String(n);
  }

  // ---- events ------------------------------------------------------------

  function connect() {
    const es = new EventSource("/events");
    const all = () => { itersWhole = true; refresh("tree"); refresh("runState"); refresh("iterations"); refresh("runs"); };
    const iteration = (ev) => { itersPending.add(ev.id); refresh("iterations"); };
    es.onopen = () => { document.body.dataset.state = "live"; $("#conn").textContent = "live"; };
    es.onerror = () => {
      // EventSource reconnects by itself, with Last-Event-ID.
      document.body.dataset.state = "reconnecting";
      $("#conn").textContent = "reconnecting";
    };
    const on = (kind, fn) => es.addEventListener(kind, (m) => {
      document.body.dataset.seq = m.lastEventId;
      fn(JSON.parse(m.data));
    });
    on("hello", all);
    on("reset", all);
    on("tree_changed", () => refresh("tree"));
    on("run_state_changed", () => refresh("runState"));
    on("iteration_added", (ev) => { iteration(ev); refresh("runState"); });
    on("iteration_changed", (ev) => {
      iteration(ev);
      refresh("runState");
      const r = state.route;
      if (r.name === "iter" && r.run + "/" + r.iter === evKey(ev.id)) refresh("view");
    });
    on("log_appended", (ev) => {
      const r = running();
      if (r && iterKey(r) === evKey(ev.id) && (ev.file === "guard.log" || ev.file === "executor.log" || ev.file === "events.jsonl")) {
        state.liveFile = ev.file;
        refresh("tail");
      }
      const rt = state.route;
      if (rt.name === "iter" && rt.run + "/" + rt.iter === evKey(ev.id) && tabFile[rt.tab] === ev.file) refresh("view");
    });
    on("runs_changed", () => refresh("runs"));
  }

  // ---- keyboard ----------------------------------------------------------

  function rowKey(ev) {
    const row = ev.target.closest("tr[data-href]");
    if (!row) return false;
    if (ev.key === "Enter") { location.hash = row.dataset.href; return true; }
    const dir = ev.key === "ArrowDown" || ev.key === "j" ? 1 : ev.key === "ArrowUp" || ev.key === "k" ? -1 : 0;
    if (!dir) return false;
    const next = dir > 0 ? row.nextElementSibling : row.previousElementSibling;
    if (next) { next.focus(); next.scrollIntoView({ block: "nearest" }); }
    return true;
  }

  function stepIter(d) {
    const r = state.route;
    const list = state.iterations;
    if (r.name === "iter") {
      const i = list.findIndex((it) => it.run === r.run && it.iter === r.iter);
      const next = list[i + d];
      if (next) location.hash = `#/iter/${encodeURIComponent(next.run)}/${next.iter}/${r.tab}`;
    } else if (list.length) {
      const it = list[list.length - 1];
      location.hash = `#/iter/${encodeURIComponent(it.run)}/${it.iter}`;
    }
  }

  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.target.matches("input, textarea, select")) return;
    if (treeKey(ev) || rowKey(ev)) { ev.preventDefault(); return; }
    const help = $("#help");
    switch (ev.key) {
      case "1": location.hash = "#/"; break;
      case "2": location.hash = "#/iterations"; break;
      case "3": location.hash = "#/runs"; break;
      case "4": location.hash = "#/chart"; break;
      case "t": focusTreeItem($("#tree").querySelector('[tabindex="0"]') || treeItems()[0]); break;
      case "c": { const c = currentNode(); if (c) openNode(c); break; }
      case "d": cycleTheme(); break;
      case "?": help.hidden = !help.hidden; break;
      case "[": stepIter(-1); break;
      case "]": stepIter(1); break;
      case "Escape":
        if (!help.hidden) help.hidden = true;
        else if (state.route.name !== "overview") history.back();
        break;
      default: return;
    }
    ev.preventDefault();
  }

  // ---- theme -------------------------------------------------------------

  function applyTheme(t) {
    if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
    else delete document.documentElement.dataset.theme;
    $("#theme").textContent = t || "auto";
  }
  function cycleTheme() {
    const order = ["auto", "light", "dark"];
    let cur = "auto";
    try { cur = localStorage.getItem("treeloop-theme") || "auto"; } catch (e) { /* storage off */ }
    const next = order[(order.indexOf(cur) + 1) % order.length];
    try { localStorage.setItem("treeloop-theme", next); } catch (e) { /* storage off */ }
    applyTheme(next);
  }

  // ---- start -------------------------------------------------------------

  async function start() {
    state.liveEl = h("section", { class: "live", id: "live" },
      h("div", { class: "live-head" }, h("span", { class: "what", id: "live-what" }), h("span", { class: "muted", id: "live-file" })),
      h("div", { class: "tail", id: "live-tail-box" }, h("pre", { id: "live-tail" })));
    try { applyTheme(localStorage.getItem("treeloop-theme") || "auto"); } catch (e) { applyTheme("auto"); }
    $("#theme").addEventListener("click", cycleTheme);
    $("#help-btn").addEventListener("click", () => { $("#help").hidden = !$("#help").hidden; });
    $("#tree").addEventListener("click", treeClick);
    $("#tree").addEventListener("focusin", (ev) => {
      const li = ev.target.closest('[role="treeitem"]');
      if (li) state.focusId = li.dataset.id;
    });
    document.addEventListener("keydown", onKey);
    window.addEventListener("hashchange", onRoute);
    setupCancel();
    try { state.config = (await api("/api/config")).body; } catch (e) { state.config = { allow_cancel: false, allow_answer: false, signed_in: false, tail_lines: 120 }; }
    renderHeader();
    onRoute();
    connect();
  }

  start();
})();
