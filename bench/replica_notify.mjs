// How long a notification takes to reach a client's GET stream when it is produced on
// another replica (sessions: shared), next to the same on one replica. For
// bench/run_replicas_bench.sh:
//   node replica_notify.mjs <session id> <GET stream URL> <POST URL> <rounds>
// Each round POSTs tools/call test_trigger_tool_change (which changes the tool list of the
// replica that runs it, so it sends notifications/tools/list_changed to the session) and
// times, from just before the POST, the POST's reply and the notification's arrival on the
// GET stream. Prints one JSON line: {post_p50_ms, post_p99_ms, notify_p50_ms, notify_p99_ms}.
const [sessionId, getUrl, postUrl, roundsText] = process.argv.slice(2);
const rounds = Number(roundsText ?? 200);
const headers = { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' };

const stream = await fetch(getUrl, { headers: { ...headers, Accept: 'text/event-stream' } });
if (stream.status !== 200) throw new Error(`GET stream: HTTP ${stream.status}`);
const reader = stream.body.getReader();
const decoder = new TextDecoder();
let buffered = '';
let waiting = null;
(async () => {
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (event.includes('notifications/tools/list_changed') && waiting) {
        const w = waiting;
        waiting = null;
        w(performance.now());
      }
    }
  }
})();

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const post = [];
const notify = [];
for (let i = 0; i < rounds + 10; i++) {
  const arrived = new Promise((resolve) => (waiting = resolve));
  const t0 = performance.now();
  const res = await fetch(postUrl, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'test_trigger_tool_change', arguments: {} } }),
  });
  await res.text();
  const t1 = performance.now();
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('no list_changed within 2 s')), 2000));
  const t2 = await Promise.race([arrived, timeout]);
  if (i >= 10) {  // the first rounds warm up
    post.push(t1 - t0);
    notify.push(t2 - t0);
  }
}
const ms = (x) => Math.round(x * 1000) / 1000;
console.log(JSON.stringify({
  post_p50_ms: ms(percentile(post, 50)), post_p99_ms: ms(percentile(post, 99)),
  notify_p50_ms: ms(percentile(notify, 50)), notify_p99_ms: ms(percentile(notify, 99)),
}));
process.exit(0);
