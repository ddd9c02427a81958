"use strict";
const $ = (id) => document.getElementById(id);

// api sends a request to the service and returns its JSON reply, or throws
// an Error carrying the reply's error code and message.
async function api(method, path, body) {
  const headers = {};
  const token = $("token").value;
  if (token) headers["Authorization"] = "Bearer " + token;
  const init = {method, headers};
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  let j = null;
  try { j = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) {
    throw new Error((j && j.error && j.error.code + ": " + j.error.message) || r.status + " " + r.statusText);
  }
  return j;
}

function fmt(x) { return x === null || x === undefined ? "n/a" : x.toFixed(4); }

// showError puts msg in the error element el, or hides it when msg is empty.
function showError(el, msg) {
  el.textContent = msg || "";
  el.hidden = !msg;
}

// bits is most significant first; differing holds bit numbers from the least significant.
function showBits(el, bits, differing) {
  const diff = new Set(differing.map((b) => 63 - b));
  el.textContent = "";
  for (let i = 0; i < bits.length; i++) {
    const s = document.createElement("span");
    s.textContent = bits[i];
    if (diff.has(i)) s.className = "diff";
    el.appendChild(s);
    if (i % 8 === 7 && i < bits.length - 1) el.appendChild(document.createTextNode(" "));
  }
}

function showFeatures(el, feats) {
  el.textContent = "";
  for (const f of feats) {
    const li = document.createElement("li");
    li.textContent = (f.text || "(hash only)") + " — " + f.weight.toFixed(3);
    el.appendChild(li);
  }
}

// clearCompare removes every trace of the previous comparison, so that an
// error is never shown above an older result.
function clearCompare() {
  $("compare-out").hidden = true;
  for (const id of ["verdict", "distance", "similarity", "jaccard", "cosine", "bits-a", "bits-b", "feat-a", "feat-b", "compare-note"]) {
    $(id).textContent = "";
  }
  $("compare-note").hidden = true;
  showError($("compare-error"), "");
}

$("compare").addEventListener("click", async () => {
  clearCompare();
  try {
    const r = await api("POST", "/v1/compare", {a: $("text-a").value, b: $("text-b").value});
    $("verdict").textContent = (r.duplicate ? "yes" : "no") + " (k " + r.k + ", Jaccard threshold " + r.threshold + ")";
    $("distance").textContent = String(r.distance);
    $("similarity").textContent = fmt(r.similarity);
    $("jaccard").textContent = fmt(r.jaccard);
    $("cosine").textContent = fmt(r.cosine);
    const notes = [];
    if (r.a.note) notes.push("First text: " + r.a.note + ".");
    if (r.b.note) notes.push("Second text: " + r.b.note + ".");
    $("compare-note").textContent = notes.join(" ");
    $("compare-note").hidden = notes.length === 0;
    showBits($("bits-a"), r.a.bits, r.differing_bits);
    showBits($("bits-b"), r.b.bits, r.differing_bits);
    $("bits-a").prepend(r.a.fingerprint + "  ");
    $("bits-b").prepend(r.b.fingerprint + "  ");
    showFeatures($("feat-a"), r.a.features);
    showFeatures($("feat-b"), r.b.features);
    $("compare-out").hidden = false;
  } catch (e) {
    clearCompare();
    showError($("compare-error"), e.message);
  }
});

function matchLine(d) {
  return d.id + "  distance " + d.distance + (d.verified ? "  Jaccard " + fmt(d.jaccard) : "  unverified (fingerprint only)") + (d.exact ? "  exact copy" : "");
}

function note(r) { return r.note ? "\nNote: " + r.note + "." : ""; }

// store runs one action of the stored-documents section: its text replaces
// the previous result, or the error does.
async function store(action) {
  $("store-out").textContent = "";
  showError($("store-error"), "");
  try {
    $("store-out").textContent = await action();
  } catch (e) {
    $("store-out").textContent = "";
    showError($("store-error"), e.message);
  }
}

function docBody(mode) {
  const body = {text: $("text-s").value, mode};
  if (mode !== "check") body.id = $("doc-id").value;
  const meta = $("meta").value.trim();
  if (meta && mode !== "check") {
    try { body.meta = JSON.parse(meta); } catch (e) { throw new Error("meta is not JSON: " + e.message); }
  }
  return body;
}

function docID() {
  const id = $("doc-id").value;
  if (!id) throw new Error("give the id of a stored document");
  return "/v1/documents/" + encodeURIComponent(id);
}

$("search").addEventListener("click", () => store(async () => {
  const r = await api("POST", "/v1/search", {text: $("text-s").value});
  return (r.results.length
    ? r.results.map(matchLine).join("\n")
    : "No stored near-duplicate (fingerprint " + r.fingerprint + ").") + note(r);
}));

$("check").addEventListener("click", () => store(async () => {
  const r = await api("POST", "/v1/documents", docBody("check"));
  return (r.duplicates.length
    ? "Near-duplicate of:\n" + r.duplicates.map(matchLine).join("\n")
    : "New: no stored near-duplicate (fingerprint " + r.fingerprint + ").") + note(r);
}));

$("add").addEventListener("click", () => store(async () => {
  const r = await api("POST", "/v1/documents", docBody("add"));
  refreshStats();
  return "Stored " + r.id + " (fingerprint " + r.fingerprint + ")." +
    (r.duplicates.length ? "\nIt duplicates:\n" + r.duplicates.map(matchLine).join("\n") : "") + note(r);
}));

$("add-if-new").addEventListener("click", () => store(async () => {
  const r = await api("POST", "/v1/documents", docBody("add_if_new"));
  refreshStats();
  return (r.stored
    ? "Stored " + r.id + " (fingerprint " + r.fingerprint + ")."
    : "Not stored: near-duplicate of " + r.duplicates.map((d) => d.id).join(", ") + ".") + note(r);
}));

$("get").addEventListener("click", () => store(async () => {
  const r = await api("GET", docID());
  const lines = ["id           " + r.id, "fingerprint  " + r.fingerprint];
  if (r.seq !== undefined) lines.push("seq          " + r.seq);
  if (r.tokens !== undefined) lines.push("tokens       " + r.tokens);
  lines.push("meta         " + (r.meta ? JSON.stringify(r.meta, null, 2) : "(none)"));
  return lines.join("\n") + note(r);
}));

$("delete").addEventListener("click", () => store(async () => {
  const r = await api("DELETE", docID());
  refreshStats();
  return "Deleted " + r.id + ".";
}));

// describeMethod says in words what decision the server runs, from the
// settings /v1/stats reports: how candidates are found and how a candidate
// is confirmed.
function describeMethod(s) {
  let find;
  if (s.method === "minhash") {
    find = "MinHash signatures of " + s.shingle + "-word shingles (" + s.perms + " permutations, " +
      s.bands + " bands of " + s.rows + " rows) find the candidates";
  } else if (s.method === "simhash") {
    find = "64-bit SimHash fingerprints (" + s.profile + " profile) within " + s.k +
      " bits find the candidates (" + s.k_short + " bits for texts under " + s.short_tokens + " tokens)";
  } else {
    find = "Method " + s.method + " finds the candidates";
  }
  let confirm;
  if (s.verify === "jaccard") {
    confirm = "each is confirmed by the exact Jaccard similarity of the word shingles, at " + s.threshold + " or more";
  } else if (s.verify === "cosine") {
    confirm = "each is confirmed by the cosine similarity of TF-IDF word vectors, at " + s.threshold + " or more";
  } else {
    confirm = "the fingerprint distance alone decides (no verification)";
  }
  return find + "; " + confirm + ". The same decision as neardup dedup and neardup compare.";
}

async function refreshStats() {
  const t = $("stats");
  try {
    const st = await api("GET", "/v1/stats");
    showError($("stats-error"), "");
    t.textContent = "";
    const row = (k, v) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      const td = document.createElement("td");
      th.textContent = k;
      td.textContent = typeof v === "object" ? JSON.stringify(v) : String(v);
      td.id = "stat-" + k;
      tr.append(th, td);
      t.appendChild(tr);
    };
    for (const k of ["documents", "fingerprint_only_documents", "ready", "sketch_bytes", "heap_bytes", "store_bytes", "uptime_seconds"]) {
      if (st[k] !== undefined) row(k, k === "uptime_seconds" ? Math.round(st[k]) : st[k]);
    }
    const set = st.settings || {};
    for (const k of Object.keys(set).sort()) row(k, set[k]);
    $("method").textContent = describeMethod(set);
  } catch (e) {
    t.textContent = "";
    showError($("stats-error"), e.message);
  }
}

$("stats-refresh").addEventListener("click", refreshStats);
refreshStats();
