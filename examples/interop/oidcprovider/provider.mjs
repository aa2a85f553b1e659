// provider.mjs runs oidc-provider (pinned in package.json) as the
// authorization server of the DPoP interoperability test, on 127.0.0.1 and
// a free port, and prints one JSON line on standard output once it
// listens: {"issuer":…,"jwks_uri":…}. It stops on SIGTERM or when standard
// input closes.
//
//   MCPKIT_OIDC_PROVIDER_DIR=~/.cache/mcpkit/oidc-provider \
//   MCPKIT_RESOURCE=http://127.0.0.1:8080/mcp MCPKIT_ACCOUNT=alice \
//   MCPKIT_REDIRECT_URI=http://127.0.0.1/callback node provider.mjs
//
// Configuration (what a production authorization server for an MCP
// server does, in miniature): one public client ("mcp-interop", PKCE,
// authorization code, the redirect URI given), resource indicators
// (RFC 8707) with MCPKIT_RESOURCE as the one resource server, whose access
// tokens are RFC 9068 JWTs (at+jwt, ES256) with the scope documents:read,
// and DPoP (RFC 9449): a token request with a DPoP proof gets a
// DPoP-bound token (token_type DPoP, cnf.jkt). The signing key is
// generated at start. Logins are automatic: the interaction endpoint signs
// in MCPKIT_ACCOUNT and grants what the client asked for, so a test can
// drive the authorization code flow with plain HTTP requests. With
// MCPKIT_LOGIN=form, a person signs in instead: the interaction endpoint
// shows a login form (a "User name" field and a "Sign in" button) and
// signs in whoever is typed there; consent stays automatic.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function fail(msg) {
  process.stderr.write(`provider.mjs: ${msg}\n`);
  process.exit(2);
}
const dir = process.env.MCPKIT_OIDC_PROVIDER_DIR;
const resource = process.env.MCPKIT_RESOURCE;
const account = process.env.MCPKIT_ACCOUNT || 'alice';
const redirectURI = process.env.MCPKIT_REDIRECT_URI || 'http://127.0.0.1/callback';
const loginForm = process.env.MCPKIT_LOGIN === 'form';
if (!dir) fail('MCPKIT_OIDC_PROVIDER_DIR is not set (run examples/interop/oidcprovider/install.sh)');
if (!resource) fail('MCPKIT_RESOURCE is not set');

const entry = join(dir, 'node_modules', 'oidc-provider', 'lib', 'index.js');
const { default: Provider } = await import(pathToFileURL(entry).href);

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'ES256', use: 'sig' };

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: { keys: [signingKey] },
  clients: [{
    client_id: 'mcp-interop',
    token_endpoint_auth_method: 'none',
    application_type: 'native',
    redirect_uris: [redirectURI],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    id_token_signed_response_alg: 'ES256', // the one signing key
  }],
  cookies: { keys: [randomBytes(32).toString('hex')] },
  pkce: { required: () => true },
  scopes: ['openid', 'offline_access'],
  features: {
    devInteractions: { enabled: false },
    dPoP: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
        return {
          scope: 'documents:read',
          audience: resource,
          accessTokenTTL: 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
  findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  loadExistingGrant: async (ctx) => {
    const id = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    return id ? ctx.oidc.provider.Grant.find(id) : undefined;
  },
});
provider.proxy = false;

// The automatic interaction: sign in the account, grant what was asked.
provider.use(async (ctx, next) => {
  const m = /^\/interaction\/([^/]+)$/.exec(ctx.path);
  if (!m) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  let result;
  if (details.prompt.name === 'login' && loginForm && ctx.method === 'GET') {
    ctx.type = 'html';
    ctx.set('cache-control', 'no-store');
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in (oidc-provider)</title></head>
<body><h1>Sign in</h1><form method="post" action="${ctx.path}"><label for="login">User name</label>
<input id="login" name="login" autocomplete="off" required><button type="submit">Sign in</button></form></body></html>`;
    return;
  }
  if (details.prompt.name === 'login' && loginForm) {
    let body = '';
    for await (const chunk of ctx.req) {
      body += chunk;
      if (body.length > 4096) ctx.throw(413);
    }
    const login = new URLSearchParams(body).get('login') ?? '';
    if (!/^[a-z0-9_-]{1,64}$/.test(login)) ctx.throw(400, 'invalid user name');
    result = { login: { accountId: login } };
  } else if (details.prompt.name === 'login') {
    result = { login: { accountId: account } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    const d = details.prompt.details;
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(d.missingResourceScopes || {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  ctx.respond = false;
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
});
// Why a request was refused (err.error_detail, which oidc-provider keeps
// out of its responses) goes to standard error, which the tests show when
// they fail.
for (const ev of ['authorization.error', 'grant.error']) {
  provider.on(ev, (ctx, err) => process.stderr.write(`provider.mjs: ${ev}: ${err?.error ?? err?.name}: ${err?.error_description ?? ''} (${err?.error_detail ?? 'no detail'})\n`));
}
provider.on('server_error', (ctx, err) => process.stderr.write(`provider.mjs: server_error: ${err?.stack ?? err}\n`));

server.on('request', provider.callback());
process.stdout.write(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }) + '\n');

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
