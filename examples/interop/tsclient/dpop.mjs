// dpop.mjs drives an mcpkit server that requires DPoP (RFC 9449) with the
// official MCP TypeScript SDK v2 client (@modelcontextprotocol/client,
// pinned in package.json) and its own DPoP support: an OAuthClientProvider
// whose dpop() returns a DpopSession, so that the SDK signs a proof into
// the token request (the authorization server binds the token to the key)
// and presents the token as "Authorization: DPoP" with a fresh proof on
// every request, retrying use_dpop_nonce challenges with the server's
// nonce. It prints a JSON summary on standard output.
//
//   MCPKIT_TS_SDK_DIR=~/.cache/mcpkit/ts-sdk MCPKIT_REDIRECT_URI=http://127.0.0.1/callback \
//     node dpop.mjs http://127.0.0.1:8080/mcp [FOREIGN_URI...]
//
// The authorization server is discovered from the server's RFC 9728
// metadata, as every MCP client does. Its login and consent are automatic
// (see oidcprovider/provider.mjs): redirectToAuthorization follows the
// redirects with a cookie jar, like a browser would, up to the redirect URI,
// and the callback's code and iss go to transport.finishAuth. The SDK
// starts an authorization for each 401: the GET stream's (opened after
// initialize) and the POST's, each with its own PKCE verifier. The script
// waits for the stream's, then follows the first of the two authorization
// URLs, so that the code is exchanged with the verifier of the URL followed
// (kept under its S256 challenge), not with the one saved last. Then a new
// client walks resources/list through every nextCursor and reads every
// listed resource, and tries to read FOREIGN_URI (another user's).
// Finally, outside the SDK, it checks that the server refuses the same
// token as Bearer, a replay of a proof the SDK sent, and the token with a
// proof of another key.
//
// Exit status: 0 when every check passed, 1 when one failed (the summary
// lists the problems), 2 when the script could not run.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function usage(msg) {
  process.stderr.write(`dpop.mjs: ${msg}\nusage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_REDIRECT_URI=URI node dpop.mjs MCP_URL [FOREIGN_URI...]\n`);
  process.exit(2);
}
process.on('uncaughtException', (err) => {
  process.stderr.write(`dpop.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});

const [url, ...foreign] = process.argv.slice(2);
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
const redirectURI = process.env.MCPKIT_REDIRECT_URI || 'http://127.0.0.1/callback';
const alg = process.env.MCPKIT_DPOP_ALG || 'ES256';
if (!url) usage('missing MCP_URL');
if (!sdkDir) usage('MCPKIT_TS_SDK_DIR is not set (run examples/interop/tsclient/install.sh)');

const pkgDir = join(sdkDir, 'node_modules', '@modelcontextprotocol', 'client');
let sdkVersion;
try {
  sdkVersion = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
} catch {
  usage(`no @modelcontextprotocol/client under ${sdkDir}/node_modules (run examples/interop/tsclient/install.sh)`);
}
const sdk = await import(pathToFileURL(join(pkgDir, 'dist', 'index.mjs')).href);
const { Client, StreamableHTTPClientTransport, DpopSession, UnauthorizedError } = sdk;

const problems = [];
const problem = (msg) => problems.push(msg);
const summary = { sdkVersion, alg };

// Every request the SDK sends to the MCP server, with its scheme and proof.
const sent = [];
const recordingFetch = async (input, init = {}) => {
  const target = new URL(input instanceof Request ? input.url : input.toString());
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  const ex = { method: init.method ?? 'GET', path: target.pathname, auth: (headers.get('authorization') ?? '').split(' ')[0], proof: headers.get('dpop') };
  if (ex.proof) ex.proofNonce = JSON.parse(Buffer.from(ex.proof.split('.')[1], 'base64url').toString()).nonce !== undefined;
  if (typeof init.body === 'string') {
    try {
      const msg = JSON.parse(init.body);
      ex.rpcMethod = msg.method;
      ex.cursor = msg.params?.cursor !== undefined;
    } catch {}
  }
  const res = await fetch(input, init);
  ex.status = res.status;
  ex.challenge = res.headers.get('www-authenticate');
  if (target.href.startsWith(url)) sent.push(ex);
  if (ex.method === 'GET' && target.origin + target.pathname === new URL(url).origin + new URL(url).pathname && ex.status !== 401) streamSettled();
  return res;
};

// The SDKs open a GET stream after initialize; without a token it gets 401,
// and the SDK starts an authorization of its own for it, racing the POST's.
// streamSettled resolves when that attempt is over: the GET got something
// else, or the SDK reported the UnauthorizedError of its authorization.
let streamSettled;
const streamAttempt = new Promise((resolve) => { streamSettled = resolve; });

const session = await DpopSession.create({ alg });
// pkceChallenge is the S256 code_challenge of a verifier (RFC 7636).
const pkceChallenge = (v) => createHash('sha256').update(v).digest('base64url');
class Provider {
  constructor() {
    this.saved = undefined;
    this.verifiers = new Map(); // code_challenge → code_verifier, one per authorization started
    this.verifier = undefined; // the verifier of the authorization followed
    this.authorizationURLs = [];
  }
  get redirectUrl() { return redirectURI; }
  get clientMetadata() {
    return { client_name: 'mcpkit interop', redirect_uris: [redirectURI], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return { client_id: 'mcp-interop' }; }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  redirectToAuthorization(u) { this.authorizationURLs.push(new URL(u)); }
  saveCodeVerifier(v) { this.verifiers.set(pkceChallenge(v), v); }
  // follow picks the authorization whose callback comes: its verifier is
  // the one codeVerifier gives finishAuth, whatever authorization the SDK
  // started after it.
  follow(u) {
    this.verifier = this.verifiers.get(u.searchParams.get('code_challenge'));
    if (!this.verifier) throw new Error('no saved code verifier matches the authorization URL');
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('the SDK asked for a code verifier before an authorization was followed');
    return this.verifier;
  }
  dpop() { return session; }
}
const provider = new Provider();

// The browser: follow redirects, keeping cookies, until the redirect URI.
async function browse(start) {
  const jar = new Map();
  let next = new URL(start);
  for (let hops = 0; hops < 20; hops++) {
    if (next.href.startsWith(redirectURI)) return next.searchParams;
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(next, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    const loc = res.headers.get('location');
    if (!loc) {
      const text = (await res.text()).replace(/<style[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
      throw new Error(`authorization stopped at ${next.pathname}${next.search} with status ${res.status}: ${text.slice(0, 400)}`);
    }
    next = new URL(loc, next);
  }
  throw new Error('too many redirects');
}

// 1. Connect (initialize needs no token), list: 401, discovery,
// authorization with PKCE, the DPoP-bound token. The GET stream's
// authorization is started first (the script waits for it), the POST's
// second; the first is followed, as a person may finish either tab.
const mkClient = () => {
  const client = new Client({ name: 'mcpkit-dpop-interop', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recordingFetch });
  return { client, transport };
};
{
  const { client, transport } = mkClient();
  client.onerror = (err) => { if (err instanceof UnauthorizedError || /nauthorized/.test(String(err))) streamSettled(); };
  try {
    await client.connect(transport);
    const guard = setTimeout(streamSettled, 60_000); // a hang guard, not a timing assertion
    await streamAttempt;
    clearTimeout(guard);
    await client.listResources({});
    problem('listed without authorization');
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  const [authorizationURL] = provider.authorizationURLs;
  if (!authorizationURL) throw new Error('the SDK did not start the authorization');
  summary.authorizationsStarted = provider.authorizationURLs.length;
  provider.follow(authorizationURL);
  const callback = await browse(authorizationURL);
  summary.authorizationResource = authorizationURL.searchParams.get('resource');
  await transport.finishAuth(callback);
  await client.close().catch(() => {});
}
const tokens = provider.tokens();
summary.tokenType = tokens?.token_type;
const token = tokens?.access_token;
if (!token) throw new Error('no access token');
const [h64, p64] = token.split('.');
const claims = JSON.parse(Buffer.from(p64, 'base64url').toString());
summary.token = { typ: JSON.parse(Buffer.from(h64, 'base64url').toString()).typ, sub: claims.sub, aud: claims.aud, scope: claims.scope, jkt: claims.cnf?.jkt };
summary.thumbprint = session.thumbprint;
if (summary.token.jkt !== session.thumbprint) problem('the token is not bound to the session key');

// 2. Walk and read with the bound token.
const { client, transport } = mkClient();
await client.connect(transport);
summary.protocolVersion = transport.protocolVersion ?? null;
summary.listed = [];
summary.pages = 0;
let cursor;
do {
  const page = await client.listResources(cursor === undefined ? {} : { cursor });
  summary.pages++;
  for (const r of page.resources) summary.listed.push(r.uri);
  cursor = page.nextCursor;
} while (cursor !== undefined && summary.pages < 1000);
summary.read = [];
for (const uri of summary.listed) {
  try {
    const res = await client.readResource({ uri });
    summary.read.push({ uri, ok: true, bytes: (res.contents?.[0]?.text ?? '').length });
  } catch (err) {
    summary.read.push({ uri, ok: false, error: String(err?.message ?? err) });
    problem(`reading ${uri} failed`);
  }
}
summary.foreignRead = [];
for (const uri of foreign.slice(0, 1)) {
  try {
    await client.readResource({ uri });
    summary.foreignRead.push({ uri, rejected: false });
    problem(`read another user's ${uri}`);
  } catch (err) {
    summary.foreignRead.push({ uri, rejected: true, code: err?.code });
  }
}
await client.close().catch(() => {});

const toServer = sent.filter((e) => e.path === new URL(url).pathname);
summary.requests = toServer.length;
summary.dpopRequests = toServer.filter((e) => e.auth === 'DPoP' && e.proof).length;
summary.bearerRequests = toServer.filter((e) => e.auth.toLowerCase() === 'bearer').length;
summary.nonceChallenges = toServer.filter((e) => e.status === 401 && /use_dpop_nonce/.test(e.challenge ?? '')).length;
summary.noncedProofs = toServer.filter((e) => e.proofNonce).length;
summary.listRequests = toServer.filter((e) => e.rpcMethod === 'resources/list' && e.status === 200).length;
summary.listWithCursor = toServer.filter((e) => e.rpcMethod === 'resources/list' && e.cursor && e.status === 200).length;
const proofs = toServer.map((e) => e.proof).filter(Boolean);
summary.distinctProofs = new Set(proofs).size;
if (summary.distinctProofs !== proofs.length) problem('the SDK sent a proof twice');

// 3. What an attacker holding the token (and a captured proof) gets.
const post = async (headers) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: {} }),
  });
  await res.text();
  return { status: res.status, challenge: res.headers.get('www-authenticate') };
};
const lastPost = [...toServer].reverse().find((e) => e.method === 'POST' && e.proof && e.status === 200);
summary.attacks = {
  bearer: await post({ authorization: `Bearer ${token}` }),
  replayedProof: await post({ authorization: `DPoP ${token}`, dpop: lastPost?.proof ?? '' }),
  otherKey: await post({ authorization: `DPoP ${token}`, dpop: await (await DpopSession.create({ alg })).buildProof({ htm: 'POST', htu: new URL(url), accessToken: token }) }),
  noProof: await post({ authorization: `DPoP ${token}` }),
};
for (const [name, r] of Object.entries(summary.attacks)) {
  if (r.status !== 401) problem(`${name}: status ${r.status}`);
}
// And the same SDK session's fresh proof still works after them.
summary.freshProof = await post({ authorization: `DPoP ${token}`, dpop: await session.buildProof({ htm: 'POST', htu: new URL(url), accessToken: token }) });

summary.problems = problems;
summary.ok = problems.length === 0;
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
process.exit(summary.ok ? 0 : 1);
