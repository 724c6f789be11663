// An OAuth 2.x authorization server written for the tests, on loopback:
//   GET  /.well-known/oauth-authorization-server   RFC 8414 metadata
//   GET  /jwks                                     the public keys (as.keys: rotate by assigning)
//   POST /token                                    client_credentials and RFC 8693 token exchange;
//                                                  authorization_code (PKCE S256) and refresh_token
//   GET  /authorize                                no user to ask: redirects straight back with a code
//   POST /register                                 RFC 7591 dynamic registration of public clients
//   POST /introspect                               RFC 7662, for the tokens it issued or signed, and
//                                                  the opaque ones made by as.opaqueToken(claims)
// Keys are made with node:crypto at test start; access tokens are JWTs signed with the
// first key of as.keys. Confidential clients (as.clients: id -> secret) authenticate with
// client_secret_basic or client_secret_post. Every token request is recorded (secrets and
// subject tokens left out) and counted, so tests can tell cache hits from new requests.
//
//   const as = await startAuthServer({ clients: { toolport: 'secret' } });
//   as.keys = [makeKey('ec', 'key-1')];
//   const t = as.token({ sub: 'alice', aud: resource });   // a token for a user
//   ... as.exchanges, as.clientCredentialsGrants, as.tokenRequests, as.issuedTokens
//   await as.stop();
import http from 'node:http';
import crypto from 'node:crypto';

export const b64url = (data) => Buffer.from(data).toString('base64url');

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export function makeKey(kind, kid) {
  const { privateKey, publicKey } =
    kind === 'ec' ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }) : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const alg = kind === 'ec' ? 'ES256' : 'RS256';
  return { kid, alg, privateKey, publicKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' } };
}

// A compact JWS; `header` is merged over the default one.
export function sign(key, claims, header = {}) {
  const h = b64url(JSON.stringify({ alg: key.alg, typ: 'at+jwt', kid: key.kid, ...header }));
  const p = b64url(JSON.stringify(claims));
  const input = `${h}.${p}`;
  const sig =
    key.alg === 'ES256'
      ? crypto.sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' })
      : crypto.sign('sha256', Buffer.from(input), key.privateKey);
  return `${input}.${b64url(sig)}`;
}

// The claims of a JWT (not verified).
export function claimsOf(jwt) {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString());
}

// The claims of `jwt` when one of `keys` signed it and it has not expired; null otherwise.
export function verified(jwt, keys) {
  const parts = String(jwt).split('.');
  if (parts.length !== 3) return null;
  let header;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url'));
  } catch {
    return null;
  }
  const key = keys.find((k) => k.kid === header.kid);
  if (!key) return null;
  const input = Buffer.from(`${parts[0]}.${parts[1]}`);
  const sig = Buffer.from(parts[2], 'base64url');
  const ok =
    key.alg === 'ES256'
      ? crypto.verify('sha256', input, { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, sig)
      : crypto.verify('sha256', input, key.publicKey, sig);
  if (!ok) return null;
  const claims = claimsOf(jwt);
  if (typeof claims.exp === 'number' && claims.exp < Date.now() / 1000) return null;
  return claims;
}

async function readForm(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return Object.fromEntries(new URLSearchParams(text));
}

// The client the request authenticates as (basic or post), or null.
function clientOf(req, form, clients) {
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
  let id, secret;
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString();
    const colon = decoded.indexOf(':');
    // RFC 6749 §2.3.1: both parts are form-encoded before they are joined.
    const unform = (s) => decodeURIComponent(s.replace(/\+/g, ' '));
    id = unform(decoded.slice(0, colon));
    secret = unform(decoded.slice(colon + 1));
  } else {
    id = form.client_id;
    secret = form.client_secret;
  }
  return id !== undefined && clients[id] !== undefined && clients[id] === secret ? id : null;
}

export async function startAuthServer({ clients = {}, expiresIn = 3600 } = {}) {
  const as = {
    keys: [],
    clients,
    expiresIn, // of the tokens /token issues
    jwksFetches: 0,
    metadataFetches: 0,
    exchanges: 0,
    clientCredentialsGrants: 0,
    introspections: 0, // by an authenticated client
    introspectionAttempts: 0, // every POST /introspect
    tokenRequests: [], // {grant_type, client, audience, resource, scope, subject} per request
    issuedTokens: [], // every access token /token issued
    refuse: null, // set to {status, error, error_description} to refuse every token request
    publicClients: new Map(), // client_id -> registered metadata (RFC 7591), no secret
    codes: new Map(), // authorization code -> {client, redirect, challenge, scope, resource, sub}, one use
    refreshTokens: new Map(), // refresh token -> {client, sub, scope, resource}, rotated on use
    authorizationRequests: [], // {client_id, scope, resource} per /authorize
    registrations: 0,
    user: 'alice', // whom /authorize authorizes
    opaque: new Map(), // opaque token -> what introspection says (claims, `active: false` to refuse)
  };

  // An opaque access token (random, not a JWT): introspection answers `claims` for it.
  as.opaqueToken = (claims = {}) => {
    const token = `opaque-${crypto.randomBytes(24).toString('base64url')}`;
    as.opaque.set(token, claims);
    return token;
  };

  // An access token signed with the current first key; claims are merged over iss/iat/exp/jti.
  as.token = (claims = {}, { key = as.keys[0], lifetime = 300 } = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return sign(key, { iss: as.issuer, iat: now, exp: now + lifetime, jti: crypto.randomUUID(), ...claims });
  };

  function json(res, status, body) {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  }

  async function tokenEndpoint(req, res) {
    const form = await readForm(req);
    const confidential = clientOf(req, form, as.clients);
    // A public client (registered at /register) names itself and may only redeem codes and refresh.
    const client = confidential ?? (as.publicClients.has(form.client_id) ? form.client_id : null);
    as.tokenRequests.push({
      grant_type: form.grant_type,
      client,
      audience: form.audience,
      resource: form.resource,
      scope: form.scope,
      subject: form.subject_token ? (verified(form.subject_token, as.keys)?.sub ?? null) : undefined,
    });
    if (!client) return json(res, 401, { error: 'invalid_client', error_description: 'unknown client or wrong secret' });
    if (as.refuse) return json(res, as.refuse.status ?? 400, { error: as.refuse.error, error_description: as.refuse.error_description });
    let aud = form.audience ?? form.resource;
    let scope = form.scope;
    let claims;
    let refreshGrant = null; // what a refresh token issued now would carry
    if (!confidential && !['authorization_code', 'refresh_token'].includes(form.grant_type)) {
      return json(res, 400, { error: 'unauthorized_client', error_description: 'a public client may only use codes and refresh tokens' });
    }
    if (form.grant_type === 'authorization_code') {
      const grant = as.codes.get(form.code);
      as.codes.delete(form.code);
      if (!grant || grant.client !== client || grant.redirect !== form.redirect_uri)
        return json(res, 400, { error: 'invalid_grant', error_description: 'unknown code, or another client or redirect_uri' });
      // PKCE (RFC 7636): the verifier's S256 must be the challenge /authorize was given.
      if (!form.code_verifier || crypto.createHash('sha256').update(form.code_verifier).digest('base64url') !== grant.challenge)
        return json(res, 400, { error: 'invalid_grant', error_description: 'the code_verifier does not match the code_challenge' });
      if (form.resource && grant.resource && form.resource !== grant.resource)
        return json(res, 400, { error: 'invalid_target', error_description: 'not the resource the code was issued for' });
      refreshGrant = { client, sub: grant.sub, scope: grant.scope, resource: grant.resource };
      claims = { sub: grant.sub, client_id: client };
      scope = grant.scope || undefined;
      aud = grant.resource ?? aud;
    } else if (form.grant_type === 'refresh_token') {
      const grant = as.refreshTokens.get(form.refresh_token);
      if (!grant || grant.client !== client) return json(res, 400, { error: 'invalid_grant', error_description: 'unknown refresh token' });
      // A refresh never widens the grant (RFC 6749 §6).
      const asked = (form.scope ?? grant.scope).split(' ').filter(Boolean);
      if (asked.some((s) => !grant.scope.split(' ').includes(s))) return json(res, 400, { error: 'invalid_scope' });
      as.refreshTokens.delete(form.refresh_token);
      refreshGrant = grant;
      claims = { sub: grant.sub, client_id: client };
      scope = asked.join(' ') || undefined;
      aud = grant.resource ?? aud;
    } else if (form.grant_type === 'client_credentials') {
      as.clientCredentialsGrants++;
      claims = { sub: client, client_id: client };
    } else if (form.grant_type === TOKEN_EXCHANGE) {
      if (form.subject_token_type !== ACCESS_TOKEN_TYPE) return json(res, 400, { error: 'invalid_request', error_description: 'subject_token_type' });
      const subject = verified(form.subject_token, as.keys);
      if (!subject) return json(res, 400, { error: 'invalid_grant', error_description: 'the subject token is not valid' });
      as.exchanges++;
      // The new token is the user's, for the service; the client that asked is the actor (RFC 8693 §4.1).
      claims = { sub: subject.sub, client_id: client, act: { sub: client } };
    } else {
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    const accessToken = as.token({ ...claims, ...(aud ? { aud } : {}), ...(scope ? { scope } : {}) }, { lifetime: as.expiresIn });
    as.issuedTokens.push(accessToken);
    const body = { access_token: accessToken, token_type: 'Bearer', expires_in: as.expiresIn };
    if (form.grant_type === TOKEN_EXCHANGE) body.issued_token_type = ACCESS_TOKEN_TYPE;
    if (scope) body.scope = scope;
    if (refreshGrant) {
      body.refresh_token = `rt-${crypto.randomBytes(24).toString('base64url')}`;
      as.refreshTokens.set(body.refresh_token, refreshGrant);
    }
    return json(res, 200, body);
  }

  async function introspectionEndpoint(req, res) {
    const form = await readForm(req);
    as.introspectionAttempts++;
    if (!clientOf(req, form, as.clients)) return json(res, 401, { error: 'invalid_client' });
    as.introspections++;
    const claims = as.opaque.has(form.token) ? { active: true, ...as.opaque.get(form.token) } : verified(form.token, as.keys);
    if (!claims || claims.active === false) return json(res, 200, { active: false });
    return json(res, 200, { active: true, token_type: 'Bearer', ...claims });
  }

  // GET /authorize (RFC 6749 §4.1.1 with PKCE): the code goes straight back to the
  // registered redirect URI (errors too, once the client and redirect URI are known).
  function authorizationEndpoint(req, res) {
    const q = new URL(req.url, as.issuer).searchParams;
    const client = as.publicClients.get(q.get('client_id'));
    const redirect = q.get('redirect_uri');
    if (!client || !client.redirect_uris.includes(redirect)) {
      return json(res, 400, { error: 'invalid_request', error_description: 'unknown client_id or redirect_uri' });
    }
    as.authorizationRequests.push({ client_id: client.client_id, scope: q.get('scope') ?? '', resource: q.get('resource') });
    const back = new URL(redirect);
    if (q.get('state') !== null) back.searchParams.set('state', q.get('state'));
    if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) {
      back.searchParams.set('error', 'invalid_request');
    } else {
      const code = crypto.randomBytes(24).toString('base64url');
      as.codes.set(code, { client: client.client_id, redirect, challenge: q.get('code_challenge'), scope: q.get('scope') ?? '', resource: q.get('resource') ?? undefined, sub: as.user });
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { Location: back.toString(), 'Cache-Control': 'no-store' });
    res.end();
  }

  // POST /register (RFC 7591): a public client for the authorization code flow.
  async function registrationEndpoint(req, res) {
    let text = '';
    for await (const chunk of req) text += chunk;
    let metadata;
    try {
      metadata = JSON.parse(text);
    } catch {
      return json(res, 400, { error: 'invalid_client_metadata', error_description: 'not JSON' });
    }
    if (!Array.isArray(metadata.redirect_uris) || metadata.redirect_uris.length === 0) {
      return json(res, 400, { error: 'invalid_redirect_uri', error_description: 'redirect_uris is required' });
    }
    const client = { ...metadata, client_id: `dyn-${crypto.randomUUID()}`, client_id_issued_at: Math.floor(Date.now() / 1000), token_endpoint_auth_method: 'none' };
    as.publicClients.set(client.client_id, client);
    as.registrations++;
    return json(res, 201, client);
  }

  as.server = http.createServer((req, res) => {
    const route = `${req.method} ${req.url}`;
    const failed = (e) => json(res, 500, { error: 'server_error', error_description: String(e) });
    if (route === 'GET /.well-known/oauth-authorization-server') {
      as.metadataFetches++;
      return json(res, 200, {
        issuer: as.issuer,
        jwks_uri: `${as.issuer}/jwks`,
        token_endpoint: `${as.issuer}/token`,
        introspection_endpoint: `${as.issuer}/introspect`,
        authorization_endpoint: `${as.issuer}/authorize`,
        registration_endpoint: `${as.issuer}/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['client_credentials', TOKEN_EXCHANGE, 'authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      });
    }
    if (route === 'GET /jwks') {
      as.jwksFetches++;
      return json(res, 200, { keys: as.keys.map((k) => k.jwk) });
    }
    if (route === 'POST /token') return tokenEndpoint(req, res).catch(failed);
    if (route === 'POST /introspect') return introspectionEndpoint(req, res).catch(failed);
    if (req.method === 'GET' && (req.url === '/authorize' || req.url.startsWith('/authorize?'))) return authorizationEndpoint(req, res);
    if (route === 'POST /register') return registrationEndpoint(req, res).catch(failed);
    res.writeHead(404).end();
  });
  await new Promise((resolve) => as.server.listen(0, '127.0.0.1', resolve));
  as.issuer = `http://127.0.0.1:${as.server.address().port}`;
  as.stop = () => new Promise((resolve) => as.server.close(resolve));
  return as;
}
