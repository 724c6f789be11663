// An upstream MCP server (stdio, newline-delimited JSON written by hand, no SDK) whose tool
// asks its client a question and answers the call at once, without waiting for the answer
// (as server-everything does with the roots/list it sends at start, which a gateway relays
// to whichever call is in flight): the client's answer then comes after the call has ended.
//
//   node early_answer_upstream.mjs          (stdio)
//
// Tools:
//   ask_and_answer {}  sends roots/list, then answers the call ("answered") at once
//   last_answer {}     what its last roots/list got, as JSON text ({result} or {error}), or "none"
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const EARLY_ANSWER_UPSTREAM = fileURLToPath(import.meta.url);

const noArgs = { type: 'object', properties: {} };
const TOOLS = [
  { name: 'ask_and_answer', description: 'Asks the client for its roots and answers at once.', inputSchema: noArgs },
  { name: 'last_answer', description: 'What the client answered to the last roots/list.', inputSchema: noArgs },
];

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

if (process.argv[1] === EARLY_ANSWER_UPSTREAM) {
  let asked = 0;
  let lastAnswer = 'none';
  createInterface({ input: process.stdin }).on('line', (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.method === undefined) {
      // The answer to our roots/list.
      if (message.id !== undefined) lastAnswer = JSON.stringify(message.error ? { error: message.error } : { result: message.result });
      return;
    }
    if (message.id === undefined) return; // a notification
    const reply = (result) => send({ jsonrpc: '2.0', id: message.id, result });
    switch (message.method) {
      case 'initialize':
        return reply({
          protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'early-answer-upstream', version: '1.0.0' },
        });
      case 'tools/list':
        return reply({ tools: TOOLS });
      case 'tools/call':
        if (message.params?.name === 'last_answer') return reply({ content: [{ type: 'text', text: lastAnswer }] });
        asked += 1;
        send({ jsonrpc: '2.0', id: `roots-${asked}`, method: 'roots/list', params: {} });
        return reply({ content: [{ type: 'text', text: 'answered' }] });
      case 'ping':
        return reply({});
      default:
        return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
    }
  });
}
