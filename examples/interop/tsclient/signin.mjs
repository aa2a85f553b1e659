// signin.mjs signs in to an MCP server the way a person does with a real
// client: the official MCP TypeScript SDK's own OAuth support (v1
// @modelcontextprotocol/sdk or v2 @modelcontextprotocol/client, an
// OAuthClientProvider with a loopback redirect URI) discovers the
// authorization server, registers (a client ID metadata document, RFC 7591
// registration, or a pre-registered client id), and sends the person to
// the login page, which headless Chromium (driven by playwright-core, the
// system's chromium binary) shows and clicks through as the given user;
// the redirect comes back to this script's loopback listener, and the SDK
// exchanges the code. Then it walks resources/list, reads what it lists,
// tries another user's documents, optionally steps up (reads a resource
// that needs more scope: 403 insufficient_scope, sign in again through the
// page, go on) and optionally checks refresh token rotation. It prints a
// JSON summary on standard output.
//
//   MCPKIT_TS_SDK_DIR=~/.cache/mcpkit/ts-sdk MCPKIT_SIGNIN='{"sdk":"v2",...}' node signin.mjs MCP_URL
//
// MCPKIT_SIGNIN holds: sdk ("v1" or "v2"), registration ("metadata-document",
// "dynamic" or "pre-registered"), clientMetadataUrl (for
// metadata-document), clientId (for pre-registered), refreshGrant (ask for
// the refresh_token grant when registering dynamically), user, login
// ("mcpkit" for the documents server's development page, "oidc-provider"
// for provider.mjs's form), foreign (URIs of another user's documents),
// stepUp (a URI that needs more scope), checkRefresh, checkFraming,
// signInAtConnect (the server refuses initialize without a token: sign in
// at connect and connect again),
// callbackPort (0: any), chromium (the binary), userDataDir (a fresh
// profile), screenshotDir.
//
// Exit status: 0 when every check passed, 1 when one failed (the summary
// lists the problems), 2 when the script could not run.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function usage(msg) {
  process.stderr.write(`signin.mjs: ${msg}\nusage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_SIGNIN=JSON node signin.mjs MCP_URL\n`);
  process.exit(2);
}
process.on('uncaughtException', (err) => {
  process.stderr.write(`signin.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});
process.on('unhandledRejection', (err) => {
  process.stderr.write(`signin.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});

const [url] = process.argv.slice(2);
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
if (!url) usage('missing MCP_URL');
if (!sdkDir) usage('MCPKIT_TS_SDK_DIR is not set (run examples/interop/tsclient/install.sh)');
let cfg;
try {
  cfg = JSON.parse(process.env.MCPKIT_SIGNIN ?? '');
} catch {
  usage('MCPKIT_SIGNIN is not JSON');
}

const nm = join(sdkDir, 'node_modules');
const version = (pkg) => JSON.parse(readFileSync(join(nm, pkg, 'package.json'), 'utf8')).version;
let Client, StreamableHTTPClientTransport, UnauthorizedError, sdkVersion;
if (cfg.sdk === 'v1') {
  const load = (rel) => import(pathToFileURL(join(nm, '@modelcontextprotocol', 'sdk', 'dist', 'esm', rel)).href);
  ({ Client } = await load('client/index.js'));
  ({ StreamableHTTPClientTransport } = await load('client/streamableHttp.js'));
  ({ UnauthorizedError } = await load('client/auth.js'));
  sdkVersion = version('@modelcontextprotocol/sdk');
} else if (cfg.sdk === 'v2') {
  ({ Client, StreamableHTTPClientTransport, UnauthorizedError } = await import(pathToFileURL(join(nm, '@modelcontextprotocol', 'client', 'dist', 'index.mjs')).href));
  sdkVersion = version('@modelcontextprotocol/client');
} else {
  usage('sdk must be v1 or v2');
}
const { chromium } = await import(pathToFileURL(join(nm, 'playwright-core', 'index.mjs')).href);

const problems = [];
const problem = (msg) => problems.push(msg);
const summary = { sdk: cfg.sdk, sdkVersion, playwrightVersion: version('playwright-core'), registration: cfg.registration, user: cfg.user, signIns: [] };

// The client's redirection endpoint: a loopback listener, as a native app
// has (RFC 8252 §7.3).
let callbackWaiter;
const callbackServer = createServer((req, res) => {
  const u = new URL(req.url, 'http://127.0.0.1');
  if (u.pathname !== '/callback') {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Signed in</title><p>Signed in. You can close this window.</p>');
  callbackWaiter?.(Object.fromEntries(u.searchParams));
});
await new Promise((resolve) => callbackServer.listen(cfg.callbackPort ?? 0, '127.0.0.1', resolve));
const redirectUrl = `http://127.0.0.1:${callbackServer.address().port}/callback`;
const nextCallback = () => new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("no callback within 120 s")), 120_000); // a hang guard
  callbackWaiter = (q) => { clearTimeout(timer); callbackWaiter = undefined; resolve(q); };
});

// Every request the SDK sends, to the MCP server and the authorization server.
const sent = [];
const recordingFetch = async (input, init = {}) => {
  const target = new URL(input instanceof Request ? input.url : input.toString());
  const ex = { method: init.method ?? (input instanceof Request ? input.method : 'GET'), url: target.origin + target.pathname };
  if (typeof init.body === 'string') {
    try { ex.rpcMethod = JSON.parse(init.body).method; } catch {}
  } else if (init.body instanceof URLSearchParams) {
    ex.grantType = init.body.get('grant_type');
    ex.resource = init.body.get('resource');
  }
  const res = await fetch(input, init);
  ex.status = res.status;
  ex.challenge = res.headers.get('www-authenticate') ?? undefined;
  sent.push(ex);
  if (ex.method === 'GET' && ex.url === new URL(url).origin + new URL(url).pathname && ex.status !== 401) streamSettled();
  return res;
};
// The SDKs open a GET stream after initialize; without a token it gets 401,
// and the SDK starts an authorization of its own for it (without the
// challenge's scope, racing the POST's). streamSettled resolves when that
// attempt is over: the GET got something else, or the SDK reported the
// UnauthorizedError of its authorization.
let streamSettled;
const streamAttempt = new Promise((resolve) => { streamSettled = resolve; });

class Provider {
  constructor() {
    this.saved = undefined;
    this.client = cfg.registration === 'pre-registered' ? { client_id: cfg.clientId } : undefined;
    this.verifier = undefined;
    this.authorizationURLs = [];
    this.states = [];
    this.discovery = undefined;
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return {
      client_name: `mcpkit sign-in test (${cfg.sdk}, ${cfg.registration})`, redirect_uris: [redirectUrl],
      grant_types: cfg.refreshGrant ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
      response_types: ['code'], token_endpoint_auth_method: 'none', application_type: 'native',
    };
  }
  get clientMetadataUrl() { return cfg.registration === 'metadata-document' ? cfg.clientMetadataUrl : undefined; }
  state() {
    const s = randomBytes(16).toString('base64url');
    this.states.push(s);
    return s;
  }
  clientInformation() { return this.client; }
  saveClientInformation(c) { this.client = c; }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  redirectToAuthorization(u) { this.authorizationURLs.push(new URL(u)); }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  saveDiscoveryState(s) { this.discovery = s; }
  discoveryState() { return this.discovery; }
}
const provider = new Provider();

// The browser: a fresh profile, no network services of its own.
const context = await chromium.launchPersistentContext(cfg.userDataDir, {
  executablePath: cfg.chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// framed loads the login page inside an iframe of another origin (the
// callback listener's): the browser must refuse to show it.
async function framed(loginURL) {
  const page = await context.newPage();
  const html = `<!doctype html><iframe id="f" src="${loginURL.href.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}" width="600" height="400"></iframe>`;
  await page.route('http://127.0.0.1:1/frame.html', (route) => route.fulfill({ contentType: 'text/html', body: html }));
  await page.goto('http://127.0.0.1:1/frame.html');
  await page.waitForTimeout(500); // let the frame load or be blocked; what it shows is the check, not the time
  const frame = page.frames().find((f) => f !== page.mainFrame());
  const out = { frameURL: frame?.url() ?? null, formShown: frame ? await frame.locator('form').count().catch(() => 0) : 0 };
  await page.close();
  return out;
}

// browserSignIn opens the last authorization URL, records and checks the
// login page, chooses the user and approves, and returns the callback's
// parameters.
async function browserSignIn(label) {
  const authURL = provider.authorizationURLs.at(-1);
  if (!authURL) throw new Error('the SDK started no authorization');
  const q = authURL.searchParams;
  const entry = {
    label,
    authorization: {
      endpoint: authURL.origin + authURL.pathname, clientId: q.get('client_id'), scope: q.get('scope'), resource: q.get('resource'),
      codeChallengeMethod: q.get('code_challenge_method'), hasCodeChallenge: Boolean(q.get('code_challenge')),
      redirectUri: q.get('redirect_uri'), state: q.get('state'),
    },
  };
  if (cfg.checkFraming && summary.signIns.length === 0) summary.framing = await framed(authURL);
  const page = await context.newPage();
  const waitCallback = nextCallback();
  const resp = await page.goto(authURL.href);
  entry.page = { status: resp.status(), title: await page.title() };
  if (cfg.login === 'mcpkit') {
    const h = resp.headers();
    Object.assign(entry.page, {
      xFrameOptions: h['x-frame-options'], csp: h['content-security-policy'],
      banner: await page.locator('.dev').innerText(), heading: await page.locator('h1').innerText(),
      client: await page.locator('dd').first().innerText(), scopes: await page.locator('ul li code').allInnerTexts(),
      users: await page.getByRole('radio').evaluateAll((els) => els.map((e) => e.value)), scripts: await page.locator('script').count(),
      signedIn: (await page.locator('#signed-in strong').count()) ? await page.locator('#signed-in strong').innerText() : '',
    });
    if (cfg.screenshotDir) {
      entry.page.screenshot = join(cfg.screenshotDir, `${cfg.sdk}-${cfg.registration}-${label}.png`);
      await page.screenshot({ path: entry.page.screenshot, fullPage: true });
    }
    // A step-up continues the signed-in person's sign-in: the page names
    // them and offers no choice of user (only they can approve it).
    if (!entry.page.signedIn) await page.getByRole('radio', { name: cfg.user, exact: true }).check();
    await page.getByRole('button', { name: 'Approve' }).click();
  } else {
    if (cfg.screenshotDir) {
      entry.page.screenshot = join(cfg.screenshotDir, `${cfg.sdk}-${cfg.registration}-${label}.png`);
      await page.screenshot({ path: entry.page.screenshot, fullPage: true });
    }
    await page.getByLabel('User name').fill(cfg.user);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  const cb = await waitCallback;
  entry.landedOn = new URL(page.url()).pathname;
  await page.close();
  entry.callback = { hasCode: Boolean(cb.code), error: cb.error, iss: cb.iss, stateMatches: cb.state === entry.authorization.state && cb.state === provider.states.at(-1) };
  if (!cb.code) throw new Error(`the authorization server answered ${cb.error}: ${cb.error_description}`);
  summary.signIns.push(entry);
  return cb;
}

const newTransport = () => new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recordingFetch });
let transport = newTransport();
const client = new Client({ name: 'mcpkit-signin', version: '1.0.0' });

// withSignIn runs fn; when the SDK needs the person (UnauthorizedError,
// after a 401 or a 403 insufficient_scope), it signs in through the
// browser, finishes the authorization and runs fn again.
async function withSignIn(label, fn) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof UnauthorizedError) || attempt >= 2) throw err;
      const cb = await browserSignIn(`${label}-${attempt + 1}`);
      await transport.finishAuth(cb.code, cb.iss);
    }
  }
}

client.onerror = (err) => { if (err instanceof UnauthorizedError || /nauthorized/.test(String(err))) streamSettled(); };
try {
  if (cfg.signInAtConnect) {
    // The server refuses initialize itself without a token
    // (mcphttp.Options.RequireSignIn): the SDK reports the 401 of connect,
    // the person signs in, and the client connects again with a new
    // transport (a started one cannot start again).
    for (let attempt = 0; ; attempt++) {
      try {
        await client.connect(transport);
        break;
      } catch (err) {
        if (!(err instanceof UnauthorizedError) || attempt >= 1) throw err;
        const cb = await browserSignIn(`connect-${attempt + 1}`);
        await transport.finishAuth(cb.code, cb.iss);
        transport = newTransport();
      }
    }
    summary.streamAuthorizations = 0;
  } else {
    await client.connect(transport); // initialize needs no token
    // Wait for the GET stream's attempt, and leave the authorization it
    // started unanswered, as a person closes a second tab: the sign-in goes
    // through the POST's 401 and its scope.
    await Promise.race([streamAttempt, new Promise((resolve) => setTimeout(resolve, 60_000))]); // a hang guard
    summary.streamAuthorizations = provider.authorizationURLs.length;
  }
  provider.authorizationURLs = [];
  summary.listed = [];
  summary.pages = 0;
  await withSignIn('sign-in', async () => {
    summary.listed = [];
    summary.pages = 0;
    let cursor;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      summary.pages++;
      for (const r of page.resources) summary.listed.push(r.uri);
      cursor = page.nextCursor;
    } while (cursor !== undefined && summary.pages < 1000);
  });
  summary.clientId = provider.client?.client_id;
  const claimsOf = (tok) => {
    try {
      const [h, p] = tok.split('.');
      const c = JSON.parse(Buffer.from(p, 'base64url').toString());
      return { typ: JSON.parse(Buffer.from(h, 'base64url').toString()).typ, sub: c.sub, aud: c.aud, client_id: c.client_id, scope: c.scope, iss: c.iss };
    } catch {
      return null;
    }
  };
  summary.token = { ...claimsOf(provider.saved.access_token), hasRefreshToken: Boolean(provider.saved.refresh_token), tokenScope: provider.saved.scope };
  summary.read = [];
  for (const uri of summary.listed.slice(0, 3)) {
    const res = await client.readResource({ uri });
    summary.read.push({ uri, bytes: (res.contents?.[0]?.text ?? '').length });
  }
  summary.foreignRead = [];
  for (const uri of cfg.foreign ?? []) {
    try {
      await client.readResource({ uri });
      summary.foreignRead.push({ uri, rejected: false });
      problem(`read another user's ${uri}`);
    } catch (err) {
      summary.foreignRead.push({ uri, rejected: true, code: err?.code });
    }
  }

  if (cfg.stepUp) {
    const before = summary.signIns.length;
    const res = await withSignIn('step-up', () => client.readResource({ uri: cfg.stepUp }));
    const refused = sent.find((e) => e.status === 403 && e.rpcMethod === 'resources/read');
    summary.stepUp = {
      uri: cfg.stepUp, text: res.contents?.[0]?.text, challenge: refused?.challenge, signInsAfter: summary.signIns.length - before,
      scope: summary.signIns.at(-1)?.authorization.scope, token: claimsOf(provider.saved.access_token),
    };
    // And it goes on: the listing still works with the stepped-up token.
    const again = await client.listResources({});
    summary.stepUp.listsAfter = again.resources.length;
  }

  if (cfg.checkRefresh) {
    // The access token "expires": the SDK refreshes on the 401, rotating
    // the refresh token, and goes on without the person.
    const old = provider.saved.refresh_token;
    const tokenEndpoint = provider.discovery?.authorizationServerMetadata?.token_endpoint;
    provider.saved = { ...provider.saved, access_token: 'expired' };
    const signInsBefore = summary.signIns.length;
    const page = await withSignIn('refresh', () => client.listResources({}));
    const next = provider.saved.refresh_token;
    const post = async (rt) => {
      const r = await fetch(tokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', client_id: summary.clientId, refresh_token: rt }) });
      return { status: r.status, error: (await r.json()).error };
    };
    summary.refresh = {
      listedAfter: page.resources.length, signInsNeeded: summary.signIns.length - signInsBefore,
      refreshRequests: sent.filter((e) => e.grantType === 'refresh_token').length,
      rotated: Boolean(next) && next !== old, resourceSent: sent.filter((e) => e.grantType === 'refresh_token').at(-1)?.resource,
      oldReused: await post(old), // a rotated-out token: refused, and the sign-in revoked
      nextAfterReuse: await post(next),
    };
  }
} catch (err) {
  problem(String(err?.stack ?? err));
} finally {
  await client.close().catch(() => {});
  await context.close().catch(() => {});
  callbackServer.close();
}
summary.requests = sent.map(({ method, url: u, rpcMethod, grantType, status }) => ({ method, url: u, rpcMethod, grantType, status }));
summary.problems = problems;
summary.ok = problems.length === 0;
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
process.exit(summary.ok ? 0 : 1);
