// The ptxmc playground page: plain JavaScript, no build step, no network
// beyond this server's own JSON API (docs/playground.md). The server keeps
// no state: a step request carries the test and the run's choices.
"use strict";

const $ = (id) => document.getElementById(id);
const ui = {
  tab: "run",
  history: [],   // choices taken (what `ptxmc trace --follow` replays)
  redo: [],      // undone choices, the next to redo last
  // Answers can come back out of order: each kind of request keeps a
  // number, and an answer to anything but the latest is dropped.
  latest: { pick: 0, run: 0, step: 0, explain: 0 },
};

function ticket(kind) {
  return ++ui.latest[kind];
}

function stale(kind, t) {
  return ui.latest[kind] !== t;
}

// ---- small helpers ---------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Text with `backquoted` parts set as code.
function words(text) {
  return String(text).split("`").map((part, i) => (i % 2 ? el("code", {}, part) : part));
}

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  let r;
  try {
    r = await fetch(path, opts);
  } catch (e) {
    return { ok: false, status: 0, data: { error: "the server cannot be reached" } };
  }
  let data;
  try { data = await r.json(); } catch (e) { data = { error: `HTTP ${r.status}` }; }
  return { ok: r.ok, status: r.status, data };
}

// A kernel (docs/kernels.md): PTX, or CUDA C++ where the server has an nvcc.
function isKernel(file) {
  return /\.(ptx|cu)$/.test(file || "");
}

function testRequest(extra = {}) {
  const file = $("file").value || "playground.litmus";
  const req = { test: $("test").value, file, ...extra };
  if (isKernel(file) && $("launch").value.trim()) req.launch = $("launch").value;
  return req;
}

// The launch box is shown for kernels, with what this server compiles.
function updateKernelBox() {
  const file = $("file").value;
  $("launch-box").hidden = !isKernel(file);
  $("kernel-note").replaceChildren(...words(ui.cuda
    ? "Kernels: PTX as `nvcc -ptx -arch=sm_90a -lineinfo` prints it (a file name ending in .ptx), or CUDA C++ (.cu), which this server compiles with nvcc."
    : "Kernels: PTX only, as `nvcc -ptx -arch=sm_90a -lineinfo` prints it (a file name ending in .ptx); this server compiles no CUDA C++ (it was started without --nvcc)."));
}

// ---- the editor ------------------------------------------------------------

function updateGutter(errorLine) {
  const n = $("test").value.split("\n").length;
  const g = $("gutter");
  g.replaceChildren();
  for (let i = 1; i <= n; i++) {
    g.append(i === errorLine ? el("span", { class: "err" }, i) : String(i), "\n");
  }
  g.scrollTop = $("test").scrollTop;
}

function showParseError(data) {
  const box = $("parse-error");
  $("launch").classList.remove("err");
  if (data && data.field === "launch") {
    // An error in the launch box: said under it, the box marked.
    box.textContent = data.error;
    box.hidden = false;
    $("launch").classList.add("err");
    updateGutter(null);
    return true;
  }
  if (!data || data.line === undefined) {
    box.hidden = true;
    updateGutter(null);
    return false;
  }
  box.textContent = data.error;
  box.hidden = false;
  updateGutter(data.line);
  const lineHeight = parseFloat(getComputedStyle($("test")).lineHeight) || 18;
  $("test").scrollTop = Math.max(0, (data.line - 4) * lineHeight);
  return true;
}

function setTest(text, file, launch) {
  $("test").value = text;
  $("file").value = file || "playground.litmus";
  $("launch").value = launch || "";
  updateKernelBox();
  $("library").value = file || "";
  ui.history = [];
  ui.redo = [];
  showParseError(null);
  $("explanation").replaceChildren();
}

async function loadLibrary() {
  const { ok, data } = await api("/api/library");
  if (!ok) return;
  ui.cuda = data.cuda;
  updateKernelBox();
  const select = $("library");
  const groups = new Map();
  for (const f of data.files) {
    if (!groups.has(f.group)) groups.set(f.group, []);
    groups.get(f.group).push(f);
  }
  for (const [group, files] of groups) {
    const og = el("optgroup", { label: group });
    for (const f of files) og.append(el("option", { value: f.path }, f.name));
    select.append(og);
  }
}

async function pickFromLibrary(path) {
  if (!path) return;
  const t = ticket("pick");
  const { ok, data } = await api(`/api/library/file?path=${encodeURIComponent(path)}`);
  if (!ok || stale("pick", t)) return;
  setTest(data.text, data.path, data.launch);
  await refresh();
}

// ---- Run -------------------------------------------------------------------

function verdictSentence(r) {
  const cond = r.condition;
  const total = r.positive + r.negative;
  const of = `${r.positive} of ${total} final state${total === 1 ? "" : "s"} satisf${r.positive === 1 ? "ies" : "y"} its proposition`;
  let say;
  if (r.quantifier === "exists") say = r.holds ? "the outcome is allowed" : "the model forbids the outcome";
  else if (r.quantifier === "~exists") say = r.holds ? "the model forbids the outcome" : "the outcome is allowed";
  else say = r.holds ? "every final state satisfies it" : "some final state does not satisfy it";
  const holds = r.holds ? "holds" : "does not hold";
  return [el("b", {}, cond), ` ${holds}: ${say} (${of}).`];
}

function counters(r) {
  const s = r.stats || {};
  const parts = [`engine ${r.engine}`, `model ${r.model}`, `${r.outcomes.length} final states`];
  if (s.distinct_states !== undefined) parts.push(`${s.distinct_states} states explored`);
  if (r.candidates !== null && r.candidates !== undefined) parts.push(`${r.candidates} oracle nodes`);
  parts.push(`${(r.time_s * 1000).toFixed(1)} ms`);
  return parts.join(" · ");
}

// A final state (a JSON outcome object) as a condition the server parses.
function stateCondition(o) {
  return Object.entries(o).map(([k, v]) => `${k}=${v}`).join(" /\\ ");
}

// herd's condition (`exists (0:r0=1 /\\ x=2)`) as a test of an outcome object,
// to mark the rows it picks out; null if it cannot be read here.
function conditionTest(text) {
  const toks = text.replace(/^\s*(~\s*exists|exists|forall)\s*/, "")
    .match(/\/\\|\\\/|==|!=|=|~|\(|\)|[A-Za-z0-9_:.\-\[\]]+/g) || [];
  let i = 0;
  const peek = () => toks[i];
  const next = () => toks[i++];
  const term = (o, t) => {
    if (/^-?\d+$/.test(t)) return Number(t);
    const k = t.replace(/^(\d+):/, "P$1:");
    if (!(k in o)) throw new Error(`unknown ${t}`);
    return o[k];
  };
  function atom() {
    const t = next();
    if (t === "(") { const e = or(); next(); return e; }
    if (t === "~") { const e = atom(); return (o) => !e(o); }
    if (t === "true") return () => true;
    if (t === "false") return () => false;
    const op = next();
    const rhs = next();
    if (op !== "=" && op !== "==" && op !== "!=") throw new Error("comparison expected");
    return (o) => (term(o, t) === term(o, rhs)) === (op !== "!=");
  }
  function and() { let e = atom(); while (peek() === "/\\") { next(); const a = e, b = atom(); e = (o) => a(o) && b(o); } return e; }
  function or() { let e = and(); while (peek() === "\\/") { next(); const a = e, b = and(); e = (o) => a(o) || b(o); } return e; }
  try {
    const f = or();
    return i === toks.length ? (o) => { try { return f(o); } catch (e) { return false; } } : null;
  } catch (e) { return null; }
}

// An undefined step as `ptxmc run` words it (report::ub::line, without the prefix).
function undefinedText(u) {
  const sites = u.at.map((s) => `${s.thread} \`${s.instr}\` (${s.position})`).join(", ");
  return `${u.what} — ${sites}; ${u.isa}`;
}

function renderRun(reports) {
  const out = $("run-result");
  out.replaceChildren();
  for (const r of reports) {
    // Whether the condition holds is neither good nor bad news: neutral.
    // Red is kept for what is always wrong: a hang, the engines disagreeing.
    const cls = !r.agree ? "bad" : !r.complete ? "warn" : "neutral";
    const term = r.termination;
    out.append(el("h2", { class: "test-name" }, r.name, el("span", {}, r.file)));
    if (r.undefined) {
      // Undefined behaviour before anything: such a program never reads as correct.
      out.append(el("div", { class: "verdict bad", id: "undefined" },
        el("b", {}, "This program can reach undefined behaviour: "), words(undefinedText(r.undefined)), " ",
        el("button", { onclick: () => { showTab("step"); ui.history = []; ui.redo = []; step({ goal: "undefined" }); } }, "Step to it")));
    }
    if (term && term.hangs) {
      // The hang first: a program that can hang never reads as correct.
      out.append(el("div", { class: "verdict bad", id: "hang" },
        el("b", {}, `This program can hang (${term.kind}): `), words(term.why), " ",
        el("button", { onclick: () => { showTab("step"); ui.history = []; ui.redo = []; step({ goal: "hang" }); } }, "Step into it")));
    }
    out.append(el("div", { class: `verdict ${cls}`, id: "verdict" },
      term && term.hangs ? "Among the executions that end: " : "", verdictSentence(r)));
    if (!r.complete) out.append(el("p", { class: "error" }, `Incomplete: ${r.incomplete_reason}`));
    if (!r.agree) out.append(el("p", { class: "error" }, "The two engines disagree: " + JSON.stringify(r.disagreement)));
    if (r.expectation) {
      const met = r.expectation.met === null ? "" : r.expectation.met ? " — met" : " — NOT met";
      out.append(el("p", {}, `Expectation: ${r.expectation.kind}${met}`));
    }
    const cols = r.outcomes.length ? Object.keys(r.outcomes[0]) : [];
    const picks = conditionTest(r.condition);
    const table = el("table", { class: "outcomes" },
      el("tr", {}, cols.map((c) => el("th", {}, c)), el("th", {}, "")));
    for (const o of r.outcomes) {
      const cond = stateCondition(o);
      const match = picks && picks(o);
      table.append(el("tr", { class: match ? "match" : "", title: match ? "the condition's proposition holds" : null }, cols.map((c) => el("td", {}, o[c])),
        el("td", { class: "act" },
          el("button", { class: "explain-outcome", onclick: () => explain(cond, r) }, "Explain & picture"))));
    }
    out.append(table);
    out.append(el("p", { class: "counters" }, counters(r)));
    if (picks && r.positive) out.append(el("p", { class: "counters" }, "Highlighted: the final states where the condition's proposition holds."));
    out.append(el("button", { id: "explain-condition", onclick: () => explain(null, r) },
      r.quantifier === "forall" ? "Explain the condition's negation" : "Explain the condition's outcome"));
    if (term && term.why && !term.hangs) {
      out.append(el("p", { class: "counters", id: "termination" },
        words(`${term.checked ? "Terminates" : "Termination not shown"}: ${term.why}.`)));
    }
    if (r.notes && r.notes.length) out.append(el("ul", { class: "notes" }, r.notes.map((n) => el("li", {}, words(n)))));
  }
}

async function run() {
  $("run-status").textContent = "running…";
  const t = ticket("run");
  const { ok, status, data } = await api("/api/run",
    testRequest({ engine: $("engine").value, model: $("model").value }));
  if (stale("run", t)) return;
  $("run-status").textContent = "";
  $("explanation").replaceChildren();
  if (!ok) {
    if (!showParseError(data)) $("run-result").replaceChildren(el("p", { class: "error" }, `${status}: ${data.error}`));
    else $("run-result").replaceChildren();
    return;
  }
  showParseError(null);
  renderRun(data);
}

async function explain(outcome, report) {
  const box = $("explanation");
  box.replaceChildren(el("p", { class: "status" }, "explaining…"));
  const req = testRequest({ model: $("model").value });
  if (outcome) req.outcome = outcome;
  const t = ticket("explain");
  const { ok, data } = await api("/api/explain", req);
  if (stale("explain", t)) return;
  if (!ok) {
    box.replaceChildren(el("p", { class: "error" }, data.error));
    return;
  }
  const pics = el("div", { class: "pictures" });
  for (const p of data.pictures) {
    const fig = el("div", { class: "picture" }, el("h3", {}, p.title));
    // The SVG comes from this server's own renderer (report::svg).
    fig.insertAdjacentHTML("beforeend", p.svg);
    pics.append(fig);
  }
  // `replaceChildren` would show a null as the text "null": left out.
  box.replaceChildren(...[
    el("h2", { class: "plain" }, `Why: ${data.outcome}`),
    missingList(data.missing),
    el("pre", { class: "explain-text" }, data.text),
    data.pictures.length ? el("h2", {}, data.allowed ? "A witness execution" : "Candidate executions and the cycle each breaks") : null,
    pics].filter((c) => c !== null));
  box.scrollIntoView({ behavior: "smooth", block: "start" });
}

// The missing orderings of an allowed outcome, in the server's words
// (explain::missing_orderings): each stale read, its chain, and every link
// the model does not give, with where the instructions are written.
function missingList(m) {
  if (!m || m.verdict !== "allowed") return null;
  const box = el("div", { class: "missing" });
  if (m.missing.sequentially_consistent) {
    box.append(el("p", {}, "Missing orderings: none — allowed under sequential consistency: not a memory-ordering bug (an interleaving of the threads gives it, so no fence or stronger annotation can forbid it)."));
    if (m.missing.interleaving.length)
      box.append(el("p", {}, `An interleaving that gives it: ${m.missing.interleaving.join("; ")}`));
    return box;
  }
  box.append(el("h3", {}, "Missing orderings"));
  const list = el("ol", {});
  for (const p of m.missing.pairs) {
    const item = el("li", {}, el("p", {}, p.what));
    if (p.chain) item.append(el("p", { class: "chain" }, `chain: ${p.chain}`));
    const links = el("ul", {});
    for (const l of p.links) links.append(el("li", { class: "missing-link" }, l));
    item.append(links);
    list.append(item);
  }
  box.append(list);
  return box;
}

// ---- Step ------------------------------------------------------------------

async function step(extra = {}) {
  $("step-status").textContent = "…";
  const t = ticket("step");
  const { ok, data } = await api("/api/step", testRequest({
    history: ui.history, every_step: $("every-step").checked, model: $("model").value, ...extra,
  }));
  if (stale("step", t)) return null;
  $("step-status").textContent = "";
  const msg = $("step-message");
  msg.hidden = true;
  if (!ok) {
    if (!showParseError(data)) {
      msg.textContent = data.error;
      msg.className = "bad";
      msg.hidden = false;
    }
    return null;
  }
  showParseError(null);
  ui.history = data.history;
  if (data.goto) {
    msg.replaceChildren(...words(data.goto.message));
    msg.className = data.goto.reached ? "" : "bad";
    msg.hidden = false;
  }
  renderStep(data);
  return data;
}

function threadCard(t) {
  // Labels as the test writes them, before the instruction they precede.
  const labelsAt = (i) => (t.labels || []).filter((l) => l.at === i).map((l) => el("span", { class: "label" }, `${l.name}: `));
  const code = el("ol", { class: "code" }, t.code.map((c, i) =>
    el("li", { class: i < t.pc ? "done" : i === t.pc ? "next" : "" }, labelsAt(i), c)));
  const sub = (label, items) => items.length
    ? el("div", { class: "sub" }, el("b", {}, label), el("ul", {}, items.map((x) => el("li", {}, words(x)))))
    : null;
  return el("div", { class: "thread", "data-thread": t.name },
    el("div", { class: "head" }, el("span", {}, t.name), el("span", { class: "st" }, t.status)),
    t.issued_by ? el("div", { class: "sub" }, "issued by ", words(t.issued_by)) : null,
    t.registers.length ? el("div", { class: "regs" }, t.registers.join("  ")) : null,
    code,
    sub("store buffer", t.store_buffer),
    sub("read ahead", t.early_reads),
    sub("cache lines", t.cache_lines),
    sub("causal past", t.causal_past));
}

function renderState(pic) {
  const box = $("state");
  box.replaceChildren();
  // GPU → cluster → CTA boxes, as a teacher draws them.
  const gpus = new Map();
  for (const c of pic.ctas) {
    if (!gpus.has(c.gpu)) gpus.set(c.gpu, new Map());
    const cl = gpus.get(c.gpu);
    if (!cl.has(c.cluster)) cl.set(c.cluster, []);
    cl.get(c.cluster).push(c);
  }
  for (const [g, clusters] of gpus) {
    const gbox = el("div", { class: "gpu" }, el("div", { class: "box-label" }, `GPU ${g}`));
    for (const [k, ctas] of clusters) {
      const kbox = el("div", { class: "cluster" }, el("div", { class: "box-label" }, `cluster ${k}`));
      kbox.append(el("div", { class: "ctas" }, ctas.map((c) =>
        el("div", { class: "cta" }, el("div", { class: "box-label" }, `CTA ${c.cta}`),
          el("div", { class: "threads" }, c.threads.map(threadCard))))));
      gbox.append(kbox);
    }
    box.append(gbox);
  }
  if (pic.asyncs.length) {
    box.append(el("h2", {}, "Asynchronous operations"), el("div", { class: "threads" }, pic.asyncs.map(threadCard)));
  }
  box.append(el("h2", {}, "Memory at L2: each location's versions in coherence order"));
  box.append(el("div", { class: "memory" }, pic.memory.map((l) => {
    const chips = [];
    l.versions.forEach((v, i) => {
      if (i) chips.push(el("span", { class: "co" }, "<"));
      chips.push(el("span", { class: "version" }, words(v)));
    });
    return el("div", { class: "loc", "data-loc": l.name },
      el("div", { class: "name" }, l.name, l.kind === "data" ? "" : ` (${l.kind})`),
      el("div", { class: "versions" }, chips),
      l.coherence.includes("unordered") ? el("div", { class: "unordered" }, l.coherence) : null);
  })));
  for (const b of pic.barriers) box.append(el("p", {}, b));
}

function renderStep(d) {
  const tr = $("transitions");
  tr.replaceChildren();
  for (const t of d.transitions) {
    tr.append(el("button", {
      class: "transition", "data-index": t.index, title: t.step.effects.join("\n"),
      onclick: () => { ui.history.push(t.index); ui.redo = []; step(); },
    }, el("b", {}, `${t.index}`), t.step.thread, " ", el("code", {}, t.step.instruction), " ", words(t.step.action)));
  }
  if (d.history.length === 0) { ui.termination = d.termination; ui.undefined = d.undefined; }
  if (d.hang) {
    tr.prepend(el("div", { class: "over hang", id: "hang-here" }, `Hang (${d.hang.kind}): `, words(d.hang.why)));
  } else if (ui.termination && ui.termination.verdict === "hangs") {
    // Said up front, in red, as the Run view says it.
    const h = ui.termination;
    tr.prepend(el("div", { class: "over hang", id: "can-hang" }, `This program can hang (${h.kind}): `, words(h.why), " ",
      el("button", { onclick: () => step({ goal: "hang" }) }, "Go to the hang")));
  }
  // Undefined behaviour above the hang, in red too: reached by this run, or reachable.
  if (d.undefined_here) {
    tr.prepend(el("div", { class: "over hang", id: "undefined-here" }, "Undefined: ", words(undefinedText(d.undefined_here))));
  } else if (ui.undefined) {
    tr.prepend(el("div", { class: "over hang", id: "can-be-undefined" }, "This program can reach undefined behaviour: ", words(undefinedText(ui.undefined)), " ",
      el("button", { onclick: () => step({ goal: "undefined" }) }, "Go to it")));
  }
  if (!d.transitions.length) {
    const text = d.final_states ? `Final state: ${d.final_states.join("  or  ")}`
      : d.over ? "The run is over: a thread stopped at the loop bound." : d.hang ? "No transition: the run is stuck for good." : "No transition: this run is stuck; undo.";
    tr.append(el("div", { class: d.final_states ? "over" : "over stuck", id: "final-state" }, text));
  }
  renderState(d.picture);
  const hist = $("history");
  hist.replaceChildren();
  d.steps.forEach((s, i) => hist.append(el("li", { title: s.effects.join("\n") },
    el("span", { class: "choice" }, `[${s.choice}] `), s.thread, " ", el("code", {}, s.instruction), " ", words(s.action))));
  $("follow").value = d.follow;
  $("undo").disabled = !d.history.length;
  $("redo").disabled = !ui.redo.length;
  $("step-status").textContent = `step ${d.step}`;
  const rl = $("reachable-list");
  rl.replaceChildren();
  if (d.reachable) {
    const r = d.reachable;
    rl.append(el("h2", {}, `Reachable from here (${r.outcomes.length})`));
    rl.append(el("ul", {}, r.outcomes.map((o) => el("li", { class: o.condition ? "match" : "" },
      el("span", {}, o.state),
      el("button", { onclick: () => { $("goal").value = o.state; goTo(); } }, "go")))));
    if (!r.complete) rl.append(el("p", { class: "error" }, `Incomplete: ${r.incomplete_reason}`));
    rl.append(el("p", { class: "counters" }, "Highlighted: the condition's proposition holds."));
  }
}

function goTo() {
  const goal = $("goal").value.trim();
  if (!goal) return;
  ui.redo = [];
  step({ goal });
}

// ---- tabs, sharing ---------------------------------------------------------

function showTab(tab) {
  ui.tab = tab;
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === tab);
  $("run-view").hidden = tab !== "run";
  $("step-view").hidden = tab !== "step";
}

async function refresh() {
  if (ui.tab === "run") await run();
  else await step();
}

function toBase64Url(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  const s = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

async function pipe(bytes, stream) {
  const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

// The test is deflated into the fragment (never sent to any server by the
// browser); `u=` carries it uncompressed where CompressionStream is missing.
async function shareHash() {
  const text = new TextEncoder().encode($("test").value);
  const p = new URLSearchParams();
  if (window.CompressionStream) p.set("z", toBase64Url(await pipe(text, new CompressionStream("deflate-raw"))));
  else p.set("u", toBase64Url(text));
  p.set("f", $("file").value);
  if (isKernel($("file").value) && $("launch").value) p.set("l", toBase64Url(new TextEncoder().encode($("launch").value)));
  p.set("tab", ui.tab);
  if (ui.tab === "step") {
    p.set("h", ui.history.join("."));
    if (!$("every-step").checked) p.set("eager", "1");
  }
  return "#" + p.toString();
}

async function readHash() {
  if (location.hash.length < 2) return false;
  const p = new URLSearchParams(location.hash.slice(1));
  let text;
  try {
    if (p.has("z")) text = new TextDecoder().decode(await pipe(fromBase64Url(p.get("z")), new DecompressionStream("deflate-raw")));
    else if (p.has("u")) text = new TextDecoder().decode(fromBase64Url(p.get("u")));
    else return false;
  } catch (e) {
    $("run-result").replaceChildren(el("p", { class: "error" }, "This link's test cannot be decoded."));
    return false;
  }
  let launch = "";
  try {
    if (p.has("l")) launch = new TextDecoder().decode(fromBase64Url(p.get("l")));
  } catch (e) { /* an undecodable launch is an empty one: the page says what is missing */ }
  setTest(text, p.get("f"), launch);
  $("every-step").checked = p.get("eager") !== "1";
  ui.history = (p.get("h") || "").split(".").filter((x) => x !== "").map(Number);
  showTab(p.get("tab") === "step" ? "step" : "run");
  await refresh();
  return true;
}

async function share() {
  const hash = await shareHash();
  history.replaceState(null, "", hash);
  $("share-url").value = location.href;
  $("share-box").hidden = false;
  let note = "link in the address bar";
  try {
    await navigator.clipboard.writeText(location.href);
    note = "copied";
  } catch (e) { /* no clipboard (e.g. not a secure context): the field shows it */ }
  $("share-note").textContent = note;
}

function download() {
  const name = ($("file").value.split("/").pop() || "playground.litmus").replace(/\.test$/, ".test");
  const a = el("a", { href: URL.createObjectURL(new Blob([$("test").value], { type: "text/plain" })), download: name });
  document.body.append(a);
  a.click();
  a.remove();
}

// ---- wiring ----------------------------------------------------------------

function wire() {
  $("test").addEventListener("input", () => {
    ui.history = [];
    ui.redo = [];
    updateGutter(null);
  });
  $("file").addEventListener("input", updateKernelBox);
  $("launch").addEventListener("input", () => { ui.history = []; ui.redo = []; $("launch").classList.remove("err"); });
  $("launch").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); refresh(); }
  });
  $("test").addEventListener("scroll", () => { $("gutter").scrollTop = $("test").scrollTop; });
  $("test").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); refresh(); }
  });
  $("library").addEventListener("change", (e) => pickFromLibrary(e.target.value));
  for (const b of document.querySelectorAll(".tab")) {
    b.addEventListener("click", () => { showTab(b.dataset.tab); refresh(); });
  }
  $("run").addEventListener("click", run);
  $("undo").addEventListener("click", () => {
    if (!ui.history.length) return;
    ui.redo.push(ui.history.pop());
    step();
  });
  $("redo").addEventListener("click", () => {
    if (!ui.redo.length) return;
    ui.history.push(ui.redo.pop());
    step();
  });
  $("restart").addEventListener("click", () => {
    while (ui.history.length) ui.redo.push(ui.history.pop());
    step();
  });
  $("reachable").addEventListener("click", () => step({ reachable: true }));
  $("go").addEventListener("click", goTo);
  $("goal").addEventListener("keydown", (e) => { if (e.key === "Enter") goTo(); });
  $("every-step").addEventListener("change", () => { ui.history = []; ui.redo = []; step(); });
  $("share").addEventListener("click", share);
  $("download").addEventListener("click", download);
}

async function main() {
  wire();
  await loadLibrary();
  if (await readHash()) return;
  await pickFromLibrary("litmus/sb/SB+rlx.gpu.litmus");
}

main();
