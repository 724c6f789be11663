// The authorization server of bench/run_auth_bench.sh: RFC 8414 metadata and a JWKS on
// loopback, one RSA key made at start. It prints "<port> <token>" once listening: an RS256
// access token for AUDIENCE (argv[2]) valid for an hour, the one token the load sends.
import http from 'node:http';
import crypto from 'node:crypto';

const audience = process.argv[2];
if (!audience) throw new Error('usage: issuer.mjs AUDIENCE');
const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256', use: 'sig' };
let issuer = '';

const server = http.createServer((req, res) => {
  const send = (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (req.url === '/.well-known/oauth-authorization-server') send({ issuer, jwks_uri: `${issuer}/jwks` });
  else if (req.url === '/jwks') send({ keys: [jwk] });
  else res.writeHead(404).end();
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  issuer = `http://127.0.0.1:${port}`;
  const part = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const input = `${part({ alg: 'RS256', typ: 'at+jwt', kid: 'bench' })}.${part({
    iss: issuer, aud: audience, sub: 'bench-user', scope: 'mcp', iat: now, exp: now + 3600,
  })}`;
  const signature = crypto.sign('sha256', Buffer.from(input), privateKey).toString('base64url');
  console.log(`${port} ${input}.${signature}`);
});
