"use strict";
const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const headers = {"Content-Type": "application/json"};
  const token = $("token").value;
  if (token) headers["Authorization"] = "Bearer " + token;
  const r = await fetch(path, {method: "POST", headers, body: JSON.stringify(body)});
  const j = await r.json();
  if (!r.ok) throw new Error((j.error && j.error.code + ": " + j.error.message) || r.statusText);
  return j;
}

function fmt(x) { return x === null || x === undefined ? "n/a" : x.toFixed(4); }

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

$("compare").addEventListener("click", async () => {
  try {
    const r = await api("/v1/compare", {a: $("text-a").value, b: $("text-b").value});
    $("distance").textContent = String(r.distance);
    $("similarity").textContent = fmt(r.similarity);
    $("jaccard").textContent = fmt(r.jaccard);
    $("cosine").textContent = fmt(r.cosine);
    $("verdict").textContent = (r.duplicate ? "yes" : "no") + " (k " + r.k + ", Jaccard threshold " + r.threshold + ")";
    showBits($("bits-a"), r.a.bits, r.differing_bits);
    showBits($("bits-b"), r.b.bits, r.differing_bits);
    $("bits-a").prepend(r.a.fingerprint + "  ");
    $("bits-b").prepend(r.b.fingerprint + "  ");
    showFeatures($("feat-a"), r.a.features);
    showFeatures($("feat-b"), r.b.features);
    $("compare-out").hidden = false;
  } catch (e) {
    $("distance").textContent = "error";
    $("compare-out").hidden = false;
    $("verdict").textContent = e.message;
  }
});

$("search").addEventListener("click", async () => {
  try {
    const r = await api("/v1/search", {text: $("text-s").value});
    $("store-out").textContent = r.results.length
      ? r.results.map((h) => h.id + "  distance " + h.distance + (h.verified ? "  Jaccard " + fmt(h.jaccard) : "  unverified (fingerprint only)")).join("\n")
      : "No stored near-duplicate (fingerprint " + r.fingerprint + ").";
  } catch (e) { $("store-out").textContent = e.message; }
});

$("add").addEventListener("click", async () => {
  try {
    const r = await api("/v1/documents", {id: $("doc-id").value, text: $("text-s").value, mode: "add_if_new"});
    $("store-out").textContent = r.stored
      ? "Stored " + r.id + " (fingerprint " + r.fingerprint + ")."
      : "Not stored: near-duplicate of " + r.duplicates.map((d) => d.id).join(", ");
  } catch (e) { $("store-out").textContent = e.message; }
});
