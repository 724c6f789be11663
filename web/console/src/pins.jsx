// Pins: every source whose tool definitions are pinned (docs/pinning.md), each tool with its
// state under the source's policy, and for a pending change the approved definition beside the
// new one. Approve (a tool, or all of a source) and Reset each ask to be confirmed; the
// approval goes through the server's pin API as the signed-in operator, who is named in the
// audit record.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "./api.js";
import { time } from "./format.js";
import { approvedFor, canonicalLines, finding, pendingCount, sideBySide } from "./pin_diff.js";

// Tells the navigation's badge how many changes wait, whenever this page learns it.
export const PINS_EVENT = "toolport:pins";
function announce(answer) {
  dispatchEvent(new CustomEvent(PINS_EVENT, { detail: pendingCount(answer) }));
}

const short = (digest) => (digest ? `sha256:${digest.slice(0, 12)}` : "–");

// What the policy does to a pending definition (and, under block-source, to the whole source).
function withheldWord(policy) {
  if (policy === "quarantine") return "quarantined";
  if (policy === "block-source") return "blocked source";
  return "still served";
}

// A source's tools: one row per key that has a pin or a pending definition.
function rowsOf(source) {
  const byKey = new Map();
  for (const p of source.pinned) byKey.set(`${p.kind}:${p.name}`, { key: `${p.kind}:${p.name}`, pin: p, pending: null });
  for (const p of source.pending) {
    const key = `${p.kind}:${p.name}`;
    byKey.set(key, { ...(byKey.get(key) || { key, pin: null }), pending: p });
  }
  return [...byKey.values()].sort((x, y) => x.key.localeCompare(y.key));
}

function StateBadges({ row, source }) {
  const blocked = source.policy === "block-source" && source.pending.length > 0;
  if (!row.pending) {
    return blocked ? <span class="badge pin-blocked">blocked source</span> : <span class="badge pin-pinned">pinned</span>;
  }
  const word = withheldWord(source.policy);
  return (
    <>
      <span class={`badge pin-${finding(row.pending)}`}>{finding(row.pending)}</span>{" "}
      <span class={`badge ${word === "still served" ? "pin-served" : word === "quarantined" ? "pin-quarantined" : "pin-blocked"}`}>{word}</span>
    </>
  );
}

// A button that asks before it acts: the question, the confirming button (focused) and Cancel
// (or Escape). `run` returns a message to show once done.
function Confirm({ id, label, question, confirm, danger, run, done, action }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const yes = useRef(null);
  const opener = useRef(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) yes.current?.focus();
    else if (wasAsking.current) opener.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  if (!asking) {
    return (
      <span class="confirmable">
        <button ref={opener} class={danger ? "danger" : ""} data-action={action} onClick={() => (setError(null), setAsking(true))}>
          {label}
        </button>
        {error && <span class="bad-text" role="alert"> {error.message} {error.suggestion}</span>}
      </span>
    );
  }
  return (
    <div class="confirm" role="group" aria-labelledby={id} onKeyDown={(e) => e.key === "Escape" && setAsking(false)}>
      <span id={id}>{question}</span>
      <button
        ref={yes}
        class={danger ? "danger" : ""}
        data-confirm={action}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            const message = await run();
            setAsking(false);
            done(message);
          } catch (e) {
            setError(e);
            setAsking(false);
          }
          setBusy(false);
        }}
      >
        {busy ? "Working…" : confirm}
      </button>
      <button class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </div>
  );
}

function DiffTable({ name, before, after }) {
  const rows = sideBySide(before?.definition, after.definition);
  const changed = rows.filter((r) => r.left?.kind !== "same").length;
  const side = (cell, which) => {
    if (!cell) return [<td key={`${which}-ln`} class="ln" />, <td key={`${which}-code`} class="code empty" data-side={which} />];
    const mark = cell.kind === "old" ? "−" : cell.kind === "new" ? "+" : " ";
    const spoken = cell.kind === "old" ? "removed: " : cell.kind === "new" ? "added: " : "";
    return [
      <td key={`${which}-ln`} class="ln">{cell.line}</td>,
      <td key={`${which}-code`} class={`code ${cell.kind}`} data-side={which}>
        <span class="mark" aria-hidden="true">{mark}</span>
        {spoken && <span class="sr-only">{spoken}</span>}
        {cell.text}
      </td>,
    ];
  };
  return (
    <div class="diff-scroll" tabIndex={0} role="region" aria-label={`Definitions of ${name}, approved and new`}>
      <table class="diff">
        <caption class="sr-only">
          The approved definition on the left, the new one on the right, as canonical JSON; {changed} lines differ.
        </caption>
        <colgroup>
          <col class="ln-col" />
          <col />
          <col class="ln-col" />
          <col />
        </colgroup>
        <thead>
          <tr>
            <th scope="col" colSpan={2}>
              Approved {before ? <code>{short(before.digest)}</code> : <span class="muted">(none: a new tool)</span>}
            </th>
            <th scope="col" colSpan={2}>
              New <code>{short(after.digest)}</code>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i} class={r.left?.kind === "same" ? "" : "changed"}>
              {side(r.left, "approved")}
              {side(r.right, "new")}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Detail({ source, row, close, changed }) {
  const name = row.pending?.name || row.pin.name;
  const approved = row.pending ? approvedFor(row.pending, source.pinned) : row.pin;
  const title = row.pending ? `${row.pending.kind} ${name}: ${row.pending.change}` : `${row.pin.kind} ${name}: pinned`;
  const served = source.policy === "quarantine" || source.policy === "block-source" ? " It is served from now on." : "";
  // Focus moves to what was opened (the heading names the change), for keyboard and reader.
  const heading = useRef(null);
  useEffect(() => heading.current?.focus(), [row.key]);
  return (
    <section class="pin-detail" aria-labelledby="pin-detail-title" data-detail={row.key}>
      <h3 id="pin-detail-title" tabIndex={-1} ref={heading}>{title}</h3>
      {row.pending ? (
        <DiffTable name={name} before={approved} after={row.pending} />
      ) : (
        <div class="diff-scroll" tabIndex={0} role="region" aria-label={`Definition of ${name}`}>
          <pre>{canonicalLines(row.pin.definition).join("\n")}</pre>
        </div>
      )}
      <div class="actions">
        {row.pending && (
          <Confirm
            id="confirm-approve-tool"
            action="approve-tool"
            label={<>Approve<span class="sr-only"> {name}</span></>}
            question={`Approve the new definition of ${name} (${short(row.pending.digest)}) as what source ${source.source} may serve?`}
            confirm="Yes, approve"
            run={async () => {
              const answer = await api("pins/approve", {
                method: "POST",
                body: { source: source.source, name: row.pending.name, digest: row.pending.digest },
              });
              return `Approved ${answer.approved.map((r) => r.name).join(", ")} of ${source.source}.${served}`;
            }}
            done={changed}
          />
        )}
        <Confirm
          id="confirm-reset-tool"
          action="reset-tool"
          danger
          label={<>Reset<span class="sr-only"> the pin of {name}</span></>}
          question={`Forget the pin of ${name}? Its next listing is pinned afresh, as first seen.`}
          confirm="Yes, reset"
          run={async () => {
            const answer = await api("pins/reset", { method: "POST", body: { source: source.source, name } });
            return `Reset ${answer.reset} entries of ${name} in ${source.source}.`;
          }}
          done={changed}
        />
        <button class="secondary" onClick={close}>
          Close
        </button>
      </div>
    </section>
  );
}

function Source({ source, selected, select, changed }) {
  const rows = rowsOf(source);
  const heading = `pin-source-${source.source.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const open = rows.find((r) => selected === r.key);
  return (
    <section class="card pin-source" aria-labelledby={heading} data-source={source.source}>
      <h2 id={heading}>
        {source.source} <span class="muted">pinning: {source.policy}</span>{" "}
        {source.pending.length > 0 && <span class="badge pin-pending">{source.pending.length} pending</span>}
      </h2>
      <div class="actions">
        {source.pending.length > 0 && (
          <Confirm
            id={`${heading}-approve`}
            action="approve-source"
            label={`Approve all of ${source.source} (${source.pending.length})`}
            question={`Approve all ${source.pending.length} pending definitions of ${source.source}, reviewed or not?`}
            confirm="Yes, approve all"
            run={async () => {
              const answer = await api("pins/approve", { method: "POST", body: { source: source.source } });
              return `Approved ${answer.approved.length} definitions of ${source.source}.`;
            }}
            done={changed}
          />
        )}
        <Confirm
          id={`${heading}-reset`}
          action="reset-source"
          danger
          label={`Reset ${source.source}`}
          question={`Forget every pin of ${source.source}? Its next listing is trusted as first seen.`}
          confirm="Yes, reset the source"
          run={async () => {
            const answer = await api("pins/reset", { method: "POST", body: { source: source.source } });
            return `Reset ${answer.reset} entries of ${source.source}.`;
          }}
          done={changed}
        />
      </div>
      {rows.length === 0 ? (
        <p class="muted">Nothing pinned yet: the source's next listing is pinned.</p>
      ) : (
        <table class="pins">
          <thead>
            <tr>
              <th scope="col">Name</th><th scope="col">Kind</th><th scope="col">State</th>
              <th scope="col">Pinned or approved</th><th scope="col">By</th><th scope="col">Digest</th>
              <th scope="col"><span class="sr-only">Action</span></th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const name = row.pending?.name || row.pin.name;
              return (
                <tr key={row.key} data-key={row.key} class={selected === row.key ? "open" : ""}>
                  <th scope="row">{name}</th>
                  <td>{(row.pending || row.pin).kind}</td>
                  <td><StateBadges row={row} source={source} />{row.pending && <div class="change">{row.pending.change}</div>}</td>
                  <td>
                    {row.pin ? (row.pin.by === "first sight" ? `first pinned ${time(row.pin.time)}` : `approved ${time(row.pin.time)}`) : "–"}
                    {row.pending && <div class="muted">new one seen {time(row.pending.time)}</div>}
                  </td>
                  <td>{row.pin?.by || "–"}</td>
                  <td><code>{short((row.pending || row.pin).digest)}</code></td>
                  <td>
                    <button class="secondary" data-action="review" aria-expanded={selected === row.key ? "true" : "false"}
                      onClick={() => select(selected === row.key ? null : row.key)}>
                      {row.pending ? "Review" : "Details"}<span class="sr-only"> {name}</span>
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {open && <Detail source={source} row={open} close={() => select(null)} changed={changed} />}
    </section>
  );
}

export function Pins() {
  const [answer, setAnswer] = useState(null);
  const [error, setError] = useState(null);
  const [selected, setSelected] = useState(null); // {source, key}
  const [message, setMessage] = useState("");
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    api("pins", { signal: controller.signal })
      .then((a) => (setAnswer(a), setError(null), announce(a)))
      .catch((e) => controller.signal.aborted || setError(e));
    // Changes arrive with the sources' listings: look again every few seconds.
    const timer = setTimeout(() => setTick((t) => t + 1), 4000);
    return () => (controller.abort(), clearTimeout(timer));
  }, [tick]);
  const changed = (text) => {
    setMessage(text);
    setSelected(null);
    setTick((t) => t + 1);
  };
  const sources = answer?.sources || [];
  const pending = pendingCount(answer);
  return (
    <>
      <section class="card" aria-labelledby="pins-summary">
        <h2 id="pins-summary">Pinned sources{answer ? ` (${sources.length})` : ""}</h2>
        {error && <div class="alert" role="alert">{error.message} {error.suggestion}</div>}
        <p class="muted" role="status">
          {message ? <span class="ok-text">{message} </span> : null}
          {answer?.pinning === "off"
            ? "Pinning is off on this server (pinning.default: off)."
            : answer
              ? `${pending} ${pending === 1 ? "change waits" : "changes wait"} for approval; pins kept in the ${answer.store} store.`
              : "Loading…"}
        </p>
        {answer && answer.pinning !== "off" && sources.length === 0 && <p class="muted">No source is pinned yet.</p>}
      </section>
      {sources.map((s) => (
        <Source
          key={s.source}
          source={s}
          selected={selected?.source === s.source ? selected.key : null}
          select={(key) => setSelected(key ? { source: s.source, key } : null)}
          changed={changed}
        />
      ))}
    </>
  );
}
