// The operator page: a status band from GET /api/status and a search that speaks MCP Streamable HTTP to
// /mcp, the endpoint every MCP client uses (initialize, Mcp-Session-Id, notifications/initialized,
// tools/call ground). Plain JS, no build step, nothing fetched from anywhere but this listener (ADR 0049).
"use strict";
(() => {
  const settings = JSON.parse(document.body.dataset.settings || "{}");
  const TOKEN_KEY = "hallouminate.token";
  const MCP_PROTOCOL = "2025-06-18";
  const $ = (id) => document.getElementById(id);
  let token = sessionStorage.getItem(TOKEN_KEY);

  // -- HTTP: the bearer token, asked for once per tab ---------------------------------------------------
  class HttpError extends Error {
    constructor(status, reason) {
      super(`HTTP ${status}: ${reason}`);
      this.status = status;
    }
  }

  let asking = null;
  function askToken(why) {
    if (asking) return asking;
    asking = new Promise((resolve) => {
      const dialog = $("token-dialog");
      if (why) $("token-why").textContent = why;
      $("token").value = "";
      $("token-form").onsubmit = (event) => {
        event.preventDefault();
        const value = $("token").value.trim();
        if (!value) return;
        token = value;
        sessionStorage.setItem(TOKEN_KEY, token);
        dialog.close();
        asking = null;
        resolve();
      };
      // Nothing works without it: Esc does not dismiss the question.
      dialog.oncancel = (event) => event.preventDefault();
      dialog.showModal();
      $("token").focus();
    });
    return asking;
  }

  async function reason(resp) {
    const text = await resp.text();
    try {
      const body = JSON.parse(text);
      const said = body.error ?? body.message ?? body.detail ?? body.reason;
      if (said !== undefined) return typeof said === "string" ? said : (said.message ?? JSON.stringify(said));
    } catch (_) { /* not JSON: the text itself */ }
    return text.trim() || resp.statusText || "no reason given";
  }

  // fetch with the token; a 401 asks for the token (again) and retries.
  async function request(url, init = {}) {
    if (settings.token && !token) await askToken();
    for (let attempt = 0; ; attempt++) {
      const headers = { ...(init.headers || {}) };
      if (token) headers.Authorization = `Bearer ${token}`;
      const resp = await fetch(url, { ...init, headers, cache: "no-store" });
      if (resp.status !== 401 || attempt >= 2) return resp;
      const why = await reason(resp);
      token = null;
      sessionStorage.removeItem(TOKEN_KEY);
      await askToken(`The daemon refused the request (HTTP 401: ${why}). Enter the token in its [http] token_file.`);
    }
  }

  // -- MCP over Streamable HTTP ---------------------------------------------------------------------------
  const mcp = { session: null, protocol: null, nextId: 1, starting: null };

  // The answer to request `id` from an SSE response (progress notifications may come first).
  async function fromSse(resp, id) {
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (value) buffer += decoder.decode(value, { stream: true });
      buffer = buffer.replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
        if (!data) continue;
        let message;
        try { message = JSON.parse(data); } catch (_) { continue; }
        if (message.id === id && ("result" in message || "error" in message)) {
          reader.cancel().catch(() => {});
          return message;
        }
      }
      if (done) throw new Error("the /mcp stream ended before its answer");
    }
  }

  async function post(method, params, notify) {
    const body = { jsonrpc: "2.0", method };
    if (params !== undefined) body.params = params;
    if (!notify) body.id = mcp.nextId++;
    const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    if (mcp.session) headers["Mcp-Session-Id"] = mcp.session;
    if (mcp.protocol) headers["MCP-Protocol-Version"] = mcp.protocol;
    const resp = await request("/mcp", { method: "POST", headers, body: JSON.stringify(body) });
    if (!resp.ok) throw new HttpError(resp.status, await reason(resp));
    const session = resp.headers.get("Mcp-Session-Id");
    if (session) mcp.session = session;
    if (notify) return null;
    const type = resp.headers.get("Content-Type") || "";
    const message = type.includes("text/event-stream") ? await fromSse(resp, body.id) : await resp.json();
    if (message.error) throw new Error(`${method}: ${message.error.message} (JSON-RPC ${message.error.code})`);
    return message.result;
  }

  async function session() {
    if (mcp.session) return;
    if (!mcp.starting) {
      mcp.starting = (async () => {
        const result = await post("initialize", {
          protocolVersion: MCP_PROTOCOL,
          capabilities: {},
          clientInfo: { name: "hallouminate-operator-page", version: "1" },
        });
        mcp.protocol = result.protocolVersion;
        await post("notifications/initialized", undefined, true);
      })().finally(() => { mcp.starting = null; });
    }
    await mcp.starting;
  }

  async function callTool(name, args) {
    for (let attempt = 0; ; attempt++) {
      await session();
      try {
        return await post("tools/call", { name, arguments: args });
      } catch (error) {
        // An expired session (idle expiry, a restarted daemon): a new one, once.
        if (error instanceof HttpError && error.status === 404 && attempt === 0) {
          mcp.session = null;
          mcp.protocol = null;
          continue;
        }
        throw error;
      }
    }
  }

  window.addEventListener("pagehide", () => {
    if (!mcp.session) return;
    const headers = { "Mcp-Session-Id": mcp.session };
    if (token) headers.Authorization = `Bearer ${token}`;
    fetch("/mcp", { method: "DELETE", headers, keepalive: true }).catch(() => {});
  });

  // -- rendering helpers ------------------------------------------------------------------------------
  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  }
  const count = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : "–");
  // Phrase searches score by occurrence counts: shown as the integers they are (as the CLI does).
  let counting = false;
  const score = (s) => (counting ? String(s) : Number(s).toFixed(4));
  function duration(secs) {
    secs = Math.floor(secs || 0);
    const d = Math.floor(secs / 86400), h = Math.floor((secs % 86400) / 3600), m = Math.floor((secs % 3600) / 60);
    if (d) return `${d}d ${h}h`;
    if (h) return `${h}h ${m}m`;
    return m ? `${m}m ${secs % 60}s` : `${secs}s`;
  }
  const progress = (run) => `${count(run.files_done)}${run.files_total != null ? ` / ${count(run.files_total)}` : ""} files`;

  // -- the status band --------------------------------------------------------------------------------
  let statusTimer = null;
  function renderStatus(s) {
    $("f-version").textContent = s.version;
    const model = s.model === "loaded" ? `${s.model_name}` : `${s.model_name} (${s.model})`;
    $("f-model").textContent = model;
    const w = s.watcher;
    $("f-watcher").textContent = w.roots.length
      ? `on · ${w.roots.length} root${w.roots.length === 1 ? "" : "s"} · ${count(w.files_upserted)} files re-read`
      : "off";
    $("f-indexing").textContent = s.indexing.length
      ? s.indexing.map((run) => `${run.corpus}: ${progress(run)} (${run.kind})`).join("; ")
      : "idle";
    $("f-uptime").textContent = duration(s.uptime_secs);
    $("f-pid").textContent = String(s.pid);
    $("corpora-caption").textContent = `corpora under ${s.root}`;
    const rows = s.corpora.map((c) => {
      let state;
      if (c.indexing) state = el("span", { text: `indexing ${progress(c.indexing)}` });
      else if (c.error) state = el("span", { class: "notice-error", text: c.error });
      else if (c.total_chunks === undefined) state = el("span", { text: "counts once the model is loaded" });
      else if (c.unindexed_files) state = el("span", { text: `${count(c.unindexed_files)} files not indexed yet` });
      else state = el("span", { class: "state-ok", text: "up to date" });
      return el("tr", { "data-corpus": c.name },
        el("th", { scope: "row", text: c.name }),
        el("td", { text: c.kind }),
        el("td", { class: "num", text: count(c.indexed_files) }),
        el("td", { class: "num", text: count(c.total_chunks) }),
        el("td", {}, state));
    });
    if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: "5", text: "no corpus in this scope" })));
    $("corpora-rows").replaceChildren(...rows);
    const problems = [...s.problems];
    if (String(s.model).startsWith("failed")) problems.unshift(`The model could not be loaded (${s.model}): searches fail until it is.`);
    else if (s.model !== "loaded") problems.unshift(`The model is ${s.model}: searches wait for it.`);
    showStatusError(problems.join(" "));
  }
  function showStatusError(text) {
    $("status-error").textContent = text;
    $("status-error").hidden = !text;
  }

  async function refreshStatus(fresh = false) {
    clearTimeout(statusTimer);
    let next = 10000;
    try {
      const resp = await request(`/api/status${fresh ? "?fresh=1" : ""}`);
      if (!resp.ok) throw new HttpError(resp.status, await reason(resp));
      const s = await resp.json();
      renderStatus(s);
      if (s.indexing.length || s.model !== "loaded") next = 2000;
    } catch (error) {
      showStatusError(`Status unavailable: ${error.message}`);
    }
    // Polled while the tab is seen; a hidden tab costs the daemon nothing.
    if (!document.hidden) statusTimer = setTimeout(refreshStatus, next);
  }
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refreshStatus(); });

  // -- the search -------------------------------------------------------------------------------------
  let searchSeq = 0;
  function notice(kind, text) {
    const node = el("p", { class: `notice-${kind}`, text });
    if (kind === "error") node.setAttribute("role", "alert");
    return node;
  }
  function chunkItem(chunk) {
    const crumbs = (chunk.heading_path || []).join(" › ") || "(top)";
    let loc = `L${chunk.line_start}–${chunk.line_end}`;
    if (chunk.page != null) loc = `p. ${chunk.page} · ${loc}`;
    return el("li", { class: "chunk" },
      el("span", { class: "heading", text: crumbs }),
      el("span", { class: "loc", text: `${loc} · ${score(chunk.score)}` }),
      el("p", { class: "snippet", text: (chunk.text ?? chunk.snippet ?? "").trim() }));
  }
  function renderResult(result) {
    const notes = [];
    const stats = result.stats || {};
    counting = "occurrences" in stats;
    notes.push(notice("info", `${count(stats.hits)} hit${stats.hits === 1 ? "" : "s"} in ${Math.round(result.took_ms)} ms`));
    if (result.low_confidence) {
      const c = result.confidence || {};
      const missing = (c.missing_words || []).map((w) => w.word);
      let text = "Low confidence: the best match is weak for this question";
      if (c.terms) text += ` (${c.terms_found} of ${c.terms} terms found${missing.length ? `; not in the corpus: ${missing.join(", ")}` : ""})`;
      notes.push(notice("warn", `${text}. Check the results before relying on them.`));
    }
    for (const w of result.warnings || []) notes.push(notice("warn", `${w.code}: ${w.message}`));
    const docs = result.docs || [];
    if (!docs.length) notes.push(notice("info", "No matches."));
    $("notice").replaceChildren(...notes);
    const items = docs.map((doc, i) => {
      const head = el("header", {},
        el("span", { class: "path", text: doc.path }),
        el("span", { class: "corpus", text: doc.corpus }),
        el("span", { class: "score", text: `score ${score(doc.score)}` }),
        result.low_confidence ? el("span", { class: "badge", text: "low confidence" }) : null,
        doc.stale ? el("span", { class: "badge", text: "stale: run index" }) : null);
      const body = [];
      if (doc.summary) body.push(el("p", { class: "summary", text: doc.summary }));
      if (doc.coverage) body.push(el("p", { class: "summary", text: `${count(doc.coverage.chunks)} chunks` }));
      if (doc.chunks) body.push(el("ol", { class: "chunks" }, ...doc.chunks.map(chunkItem)));
      return el("li", {
        class: "result", tabindex: "-1", "data-path": doc.path,
        "aria-label": `${i + 1}. ${doc.path} in ${doc.corpus}, score ${score(doc.score)}`,
      }, head, ...body);
    });
    $("results").replaceChildren(...items);
  }

  async function search(query) {
    const seq = ++searchSeq;
    $("notice").replaceChildren(notice("info", "Searching…"));
    $("results").replaceChildren();
    try {
      const result = await callTool("ground", { cwd: settings.root, query });
      if (seq !== searchSeq) return;
      if (result.isError) {
        const text = (result.content || []).map((c) => c.text || "").join(" ").trim();
        $("notice").replaceChildren(notice("error", text || "ground failed"));
        return;
      }
      const structured = result.structuredContent ?? JSON.parse(result.content[0].text);
      renderResult(structured);
    } catch (error) {
      if (seq !== searchSeq) return;
      $("notice").replaceChildren(notice("error", `Search failed: ${error.message}`));
    }
  }

  function clearSearch() {
    searchSeq++;
    $("q").value = "";
    $("notice").replaceChildren();
    $("results").replaceChildren();
    $("q").focus();
  }

  // -- keys: / search, Enter run, arrows or j/k move, Esc clear, r refresh --------------------------------
  function move(step) {
    const items = [...$("results").children];
    if (!items.length) return;
    const at = items.indexOf(document.activeElement);
    const next = at + step;
    if (next < 0) { $("q").focus(); select(null); return; }
    const target = items[Math.min(next, items.length - 1)];
    select(target);
    target.focus();
    target.scrollIntoView({ block: "nearest" });
  }
  function select(target) {
    for (const item of $("results").children) item.setAttribute("aria-selected", String(item === target));
  }

  $("search").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = $("q").value.trim();
    if (query) search(query);
  });
  document.addEventListener("keydown", (event) => {
    if ($("token-dialog").open || event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target instanceof HTMLInputElement;
    if (event.key === "Escape") { event.preventDefault(); clearSearch(); return; }
    if (event.key === "ArrowDown" || (!typing && event.key === "j")) { event.preventDefault(); move(1); return; }
    if (event.key === "ArrowUp" || (!typing && event.key === "k")) {
      if (typing) return;
      event.preventDefault(); move(-1); return;
    }
    if (typing) return;
    if (event.key === "/") { event.preventDefault(); $("q").focus(); $("q").select(); return; }
    if (event.key === "r") { event.preventDefault(); refreshStatus(true); }
  });

  refreshStatus();
})();
