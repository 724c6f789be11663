// How long a notification takes to reach a client's GET stream when it is produced on
// another replica (sessions: shared), next to the same on one replica. For
// bench/run_replicas_bench.sh:
//   node replica_notify.mjs <session id> <GET stream URL> <POST URL> <rounds>
// Each round POSTs tools/call test_trigger_tool_change (which changes the tool list of the
// replica that runs it, so it sends notifications/tools/list_changed to the session) and
// times, from just before the POST is written, the POST's reply and the notification's
// arrival on the GET stream. node:http with keep-alive sockets (fetch adds about a
// millisecond of its own per request). Prints one JSON line: {post_p50_ms, post_p99_ms,
// notify_p50_ms, notify_p99_ms}.
import http from 'node:http';

const [sessionId, getUrl, postUrl, roundsText] = process.argv.slice(2);
const rounds = Number(roundsText ?? 200);
const headers = { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' };
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

let waiting = null;
await new Promise((resolve, reject) => {
  const req = http.request(getUrl, { method: 'GET', headers: { ...headers, Accept: 'text/event-stream' } }, (res) => {
    if (res.statusCode !== 200) return reject(new Error(`GET stream: HTTP ${res.statusCode}`));
    res.setEncoding('utf8');
    let buffered = '';
    res.on('data', (chunk) => {
      const now = performance.now();
      buffered += chunk;
      let end;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (event.includes('notifications/tools/list_changed') && waiting) {
          const w = waiting;
          waiting = null;
          w(now);
        }
      }
    });
    resolve();
  });
  req.on('error', reject);
  req.end();
});

function postOnce(id) {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_trigger_tool_change', arguments: {} } });
  return new Promise((resolve, reject) => {
    const req = http.request(postUrl, {
      method: 'POST', agent,
      headers: { ...headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': Buffer.byteLength(body) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now()));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const post = [];
const notify = [];
for (let i = 0; i < rounds + 20; i++) {
  const arrived = new Promise((resolve) => (waiting = resolve));
  const t0 = performance.now();
  const t1 = await postOnce(i + 1);
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('no list_changed within 2 s')), 2000));
  const t2 = await Promise.race([arrived, timeout]);
  if (i >= 20) {  // the first rounds warm up
    post.push(t1 - t0);
    notify.push(t2 - t0);
  }
  await new Promise((r) => setTimeout(r, 2));  // rounds apart: no queueing behind the last
}
const ms = (x) => Math.round(x * 1000) / 1000;
console.log(JSON.stringify({
  post_p50_ms: ms(percentile(post, 50)), post_p99_ms: ms(percentile(post, 99)),
  notify_p50_ms: ms(percentile(notify, 50)), notify_p99_ms: ms(percentile(notify, 99)),
}));
process.exit(0);
