// A real OpenID provider (panva's `oidc-provider`, OpenID-certified) for the identity tests,
// on 127.0.0.1. The tests choose its clients, users and audiences; a few routes under
// `/__test/` let them do what an operator does to a provider (rotate its signing keys) and
// what only its key holder can (sign a token with claims of the test's choosing: expired,
// not yet valid, for another audience), play an attacker (sign with a rogue key that is
// not published, whose own key set is served elsewhere), and count what toolgate asked.
//
//   node provider.mjs '<settings as JSON>'
//
// settings: {
//   "audiences": ["http://127.0.0.1:PORT/mcp", ...],   resources that get JWT access tokens
//   "redirect_uris": ["http://127.0.0.1:PORT/console/callback"],
//   "services": {"svc-vet": ["vets"], ...},            client-credentials clients and their groups
//   "users": {"ana": ["vets"], ...},                    people who sign in, and their groups
//   "access_token_ttl": 600
// }
// Every client's secret is its id followed by "-secret". Prints `issuer <url>` once listening.

import http from 'node:http';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const settings = JSON.parse(process.argv[2] ?? '{}');
const audiences = settings.audiences ?? [];
const services = settings.services ?? {};
const users = settings.users ?? {};
const scopes = ['openid', 'offline_access', 'tools:read', 'tools:call', 'tools:admin'];
const counts = { discovery: 0, jwks: 0, introspection: 0, token: 0, rogue_jwks: 0 };

async function signingKey() {
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  return { ...jwk, kid: `k-${Math.random().toString(36).slice(2, 10)}`, alg: 'RS256', use: 'sig' };
}

function clients() {
  const list = Object.keys(services).map((id) => ({
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
  }));
  list.push({
    client_id: 'console',
    client_secret: 'console-secret',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: settings.redirect_uris ?? [],
  });
  list.push({
    client_id: 'resource-server',
    client_secret: 'resource-server-secret',
    grant_types: [],
    response_types: [],
    redirect_uris: [],
  });
  return list;
}

function configuration(keys) {
  return {
    clients: clients(),
    jwks: { keys },
    scopes,
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => {
          if (!audiences.includes(resource)) {
            throw new Provider.errors.InvalidTarget(`unknown resource ${resource}`);
          }
          return {
            scope: 'tools:read tools:call tools:admin',
            audience: resource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: settings.access_token_ttl ?? 600,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    async extraTokenClaims(ctx, token) {
      if (token.accountId) return { groups: users[token.accountId] ?? [] };
      if (token.clientId && services[token.clientId]) return { groups: services[token.clientId] };
      return undefined;
    },
    async findAccount(ctx, sub) {
      return { accountId: sub, claims: async () => ({ sub, groups: users[sub] ?? [] }) };
    },
    // The consent of a person who signed in covers what the console asked for.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId
        || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid');
      for (const resource of audiences) grant.addResourceScope(resource, 'tools:read tools:call tools:admin');
      await grant.save();
      return grant;
    },
  };
}

let issuer;
let keys = [await signingKey()];
const rogue = await signingKey();

function publicJwk(jwk) {
  const { d, p, q, dp, dq, qi, ...rest } = jwk;
  return rest;
}
let provider;

function makeProvider() {
  provider = new Provider(issuer, configuration(keys));
  provider.proxy = false;
}

async function body(request) {
  let text = '';
  for await (const chunk of request) text += chunk;
  return text ? JSON.parse(text) : {};
}

function reply(response, status, value) {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(value));
}

// What only the key holder, or the operator, can do.
async function testRoute(request, response, path) {
  if (path === '/__test/counts') return reply(response, 200, counts);
  if (path === '/__test/public-key') {
    const jwk = publicJwk(keys[0]);
    const pem = await jose.exportSPKI(await jose.importJWK(jwk, 'RS256'));
    return reply(response, 200, { jwk, pem });
  }
  if (path === '/__test/rogue-jwks') {
    counts.rogue_jwks += 1;
    return reply(response, 200, { keys: [publicJwk(rogue)] });
  }
  if (path === '/__test/sign') {
    const { claims, header, rogue: byRogue } = await body(request);
    const signer = byRogue ? rogue : keys[0];
    const key = await jose.importJWK(signer, 'RS256');
    const token = await new jose.CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: 'RS256', kid: signer.kid, typ: 'at+jwt', ...header })
      .sign(key);
    return reply(response, 200, { token });
  }
  if (path === '/__test/rotate') {
    const { keep_previous: keepPrevious } = await body(request);
    const fresh = await signingKey();
    keys = keepPrevious ? [fresh, ...keys] : [fresh];
    makeProvider();
    return reply(response, 200, { kids: keys.map((key) => key.kid) });
  }
  return reply(response, 404, { error: 'no such test route' });
}

const server = http.createServer((request, response) => {
  const path = new URL(request.url, issuer).pathname;
  if (path.startsWith('/__test/')) {
    testRoute(request, response, path).catch((error) => reply(response, 500, { error: String(error) }));
    return;
  }
  if (path.startsWith('/.well-known/')) counts.discovery += 1;
  if (path === '/jwks') counts.jwks += 1;
  if (path === '/token/introspection') counts.introspection += 1;
  if (path === '/token') counts.token += 1;
  provider.callback()(request, response);
});

server.listen(0, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  makeProvider();
  console.log(`issuer ${issuer}`);
});
