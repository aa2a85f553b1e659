// client.mjs drives an mcpkit server with the official MCP TypeScript SDK
// client (@modelcontextprotocol/sdk, pinned in package.json) and prints a
// JSON summary of what it saw on standard output.
//
//   MCPKIT_TS_SDK_DIR=~/.cache/mcpkit/ts-sdk MCPKIT_TOKEN=<alice's token> \
//     node client.mjs http://127.0.0.1:8080/mcp [FOREIGN_URI...]
//
// MCPKIT_TS_SDK_DIR is the directory whose node_modules holds the SDK
// (install.sh puts it there); the SDK is never installed in the repository.
// MCPKIT_TOKEN is the caller's bearer token (an environment variable, so it
// does not show in process listings). FOREIGN_URIS are resources of another
// user: none may be listed, and reading one must fail.
//
// With the token, it walks resources/list through every nextCursor, reads
// every listed resource, and tries to read the first foreign URI. Without
// a token, it posts resources/list with plain fetch (expecting 401 and a
// WWW-Authenticate resource_metadata URL), fetches that URL with plain
// fetch, lets the SDK's own discovery fetch it too, and lets an SDK client
// without a token try resources/list.
//
// Exit status: 0 when every check passed, 1 when one failed (the summary
// lists the problems), 2 when the script could not run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const MAX_PAGES = 1000;

function usage(msg) {
  process.stderr.write(`client.mjs: ${msg}\nusage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_TOKEN=TOKEN node client.mjs MCP_URL [FOREIGN_URI...]\n`);
  process.exit(2);
}

// Anything thrown that no check caught means the script could not run.
process.on('uncaughtException', (err) => {
  process.stderr.write(`client.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});

const [url, ...foreign] = process.argv.slice(2);
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
const token = process.env.MCPKIT_TOKEN;
if (!url) usage('missing MCP_URL');
if (!sdkDir) usage('MCPKIT_TS_SDK_DIR is not set (run examples/interop/tsclient/install.sh)');
if (!token) usage('MCPKIT_TOKEN is not set');

// The SDK is loaded from the cache directory by file URL (ESM resolves bare
// specifiers from the importing file's location, which is the repository).
const pkgDir = join(sdkDir, 'node_modules', '@modelcontextprotocol', 'sdk');
const load = (rel) => import(pathToFileURL(join(pkgDir, 'dist', 'esm', rel)).href);
let sdkVersion;
try {
  sdkVersion = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
} catch {
  usage(`no @modelcontextprotocol/sdk under ${sdkDir}/node_modules (run examples/interop/tsclient/install.sh)`);
}
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport, StreamableHTTPError } = await load('client/streamableHttp.js');
const { extractWWWAuthenticateParams, discoverOAuthProtectedResourceMetadata } = await load('client/auth.js');
const { McpError } = await load('types.js');

const problems = [];
const problem = (msg) => problems.push(msg);

function errorInfo(err) {
  if (err instanceof McpError) return { kind: 'mcp', code: err.code, message: err.message };
  if (err instanceof StreamableHTTPError) return { kind: 'http', code: err.code, message: err.message };
  return { kind: 'other', message: String(err?.message ?? err) };
}

function newClient(name, headers) {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  return { client, transport };
}

const summary = { sdkVersion, url };

// 1. Alice: list every page, read everything, try a foreign read.
{
  const { client, transport } = newClient('mcpkit-interop', { Authorization: `Bearer ${token}` });
  await client.connect(transport);
  summary.protocolVersion = transport.protocolVersion ?? null;
  summary.serverInfo = client.getServerVersion() ?? null;
  summary.resourcesCapability = Boolean(client.getServerCapabilities()?.resources);

  const listed = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listResources(cursor === undefined ? {} : { cursor });
    pages++;
    for (const r of page.resources) listed.push(r.uri);
    cursor = page.nextCursor;
    if (cursor === '') problem('an empty nextCursor was sent instead of none');
  } while (cursor && pages < MAX_PAGES);
  if (cursor) problem(`the traversal did not end within ${MAX_PAGES} pages`);
  summary.pages = pages;
  summary.listed = listed;
  const dupes = listed.filter((u, i) => listed.indexOf(u) !== i);
  if (dupes.length) problem(`listed twice: ${dupes.join(' ')}`);
  summary.foreignListed = listed.filter((u) => foreign.includes(u));
  if (summary.foreignListed.length) problem(`foreign resources listed: ${summary.foreignListed.join(' ')}`);

  summary.read = [];
  for (const uri of listed) {
    try {
      const res = await client.readResource({ uri });
      const c = res.contents?.[0];
      summary.read.push({ uri, ok: true, contentUri: c?.uri ?? null, bytes: (c?.text ?? c?.blob ?? '').length });
      if (!c || c.uri !== uri) problem(`read ${uri}: contents name another URI`);
    } catch (err) {
      summary.read.push({ uri, ok: false, error: errorInfo(err) });
      problem(`read ${uri} failed: ${errorInfo(err).message}`);
    }
  }

  summary.foreignRead = [];
  for (const uri of foreign.slice(0, 1)) {
    try {
      await client.readResource({ uri });
      summary.foreignRead.push({ uri, rejected: false });
      problem(`foreign ${uri} was readable`);
    } catch (err) {
      summary.foreignRead.push({ uri, rejected: true, error: errorInfo(err) });
    }
  }
  await client.close();
}

// 2. No token: plain fetch, then the SDK's discovery and client.
{
  const anon = {};
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list' }),
  });
  await res.body?.cancel();
  anon.status = res.status;
  anon.wwwAuthenticate = res.headers.get('WWW-Authenticate');
  if (res.status !== 401) problem(`resources/list without a token: HTTP ${res.status}, want 401`);
  const params = extractWWWAuthenticateParams(res);
  anon.resourceMetadata = params.resourceMetadataUrl?.href ?? null;
  anon.scope = params.scope ?? null;
  if (!anon.resourceMetadata) {
    problem('the 401 challenge has no resource_metadata URL');
  } else {
    const md = await fetch(anon.resourceMetadata);
    anon.metadataStatus = md.status;
    if (md.ok) {
      const doc = await md.json();
      anon.metadataResource = doc.resource ?? null;
      anon.authorizationServers = doc.authorization_servers ?? null;
    } else {
      await md.body?.cancel();
      problem(`fetching resource_metadata: HTTP ${md.status}`);
    }
    try {
      const doc = await discoverOAuthProtectedResourceMetadata(new URL(url), { resourceMetadataUrl: params.resourceMetadataUrl });
      anon.sdkDiscoveredResource = doc.resource;
    } catch (err) {
      problem(`the SDK's metadata discovery failed: ${errorInfo(err).message}`);
    }
  }

  const { client, transport } = newClient('mcpkit-interop-anonymous', {});
  try {
    await client.connect(transport);
    anon.sdkConnected = true;
    try {
      await client.listResources({});
      anon.sdkList = { rejected: false };
      problem('the SDK client listed resources without a token');
    } catch (err) {
      anon.sdkList = { rejected: true, error: errorInfo(err) };
    }
  } catch (err) {
    anon.sdkConnected = false;
    anon.sdkConnectError = errorInfo(err);
  } finally {
    await client.close();
  }
  summary.anonymous = anon;
}

summary.problems = problems;
summary.ok = problems.length === 0;
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
process.exit(summary.ok ? 0 : 1);
