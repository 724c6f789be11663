// The Pins page's side-by-side diff of two tool definitions: each printed as canonical JSON
// (keys sorted at every level, two-space indent: what `toolport pins diff` compares), then
// compared line by line (longest common subsequence) and laid out as rows of two columns.

function sorted(value) {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === "object") {
    const out = {};
    for (const key of Object.keys(value).sort()) out[key] = sorted(value[key]);
    return out;
  }
  return value;
}

// The definition's lines; none for a definition there is not (a tool added).
export function canonicalLines(definition) {
  if (definition === undefined || definition === null) return [];
  return JSON.stringify(sorted(definition), null, 2).split("\n");
}

// The edit script from `a` to `b`: [{op: "same"|"del"|"add", a?, b?}] with line indexes.
export function diffLines(a, b) {
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..] (definitions are small).
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const ops = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) ops.push({ op: "same", a: i++, b: j++ });
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) ops.push({ op: "del", a: i++ });
    else ops.push({ op: "add", b: j++ });
  }
  while (i < n) ops.push({ op: "del", a: i++ });
  while (j < m) ops.push({ op: "add", b: j++ });
  return ops;
}

// Rows of {left, right}, each side {line (1-based), text, kind: "same"|"old"|"new"} or null:
// a run of removed lines and the run of added lines after it share rows, so a changed line
// sits beside its replacement.
export function sideBySide(before, after) {
  const a = canonicalLines(before);
  const b = canonicalLines(after);
  const rows = [];
  let dels = [];
  let adds = [];
  const flush = () => {
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      const l = dels[k];
      const r = adds[k];
      rows.push({
        left: l === undefined ? null : { line: l + 1, text: a[l], kind: "old" },
        right: r === undefined ? null : { line: r + 1, text: b[r], kind: "new" },
      });
    }
    dels = [];
    adds = [];
  };
  for (const step of diffLines(a, b)) {
    if (step.op === "del") dels.push(step.a);
    else if (step.op === "add") adds.push(step.b);
    else {
      flush();
      rows.push({ left: { line: step.a + 1, text: a[step.a], kind: "same" }, right: { line: step.b + 1, text: b[step.b], kind: "same" } });
    }
  }
  flush();
  return rows;
}

// What a pending entry is ("changed", "renamed", "added"), from its one line of change.
export function finding(pending) {
  const word = (pending.change || "").split(":")[0];
  return ["changed", "renamed", "added"].includes(word) ? word : "changed";
}

// The approved definition a pending one is judged against: the pin of its name, or, for a
// rename, the pin with the same definition under another name; none for a tool added.
export function approvedFor(pending, pinned) {
  const kind = finding(pending);
  if (kind === "added") return null;
  if (kind === "renamed") {
    const same = pinned.find((p) => p.kind === pending.kind && p.body_digest === pending.body_digest && p.name !== pending.name);
    if (same) return same;
  }
  return pinned.find((p) => p.kind === pending.kind && p.name === pending.name) || null;
}

export function pendingCount(answer) {
  return (answer?.sources || []).reduce((n, s) => n + (s.pending?.length || 0), 0);
}
