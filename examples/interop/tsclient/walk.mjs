// walk.mjs lists every resource of the caller with an official MCP
// TypeScript SDK client — v1 (@modelcontextprotocol/sdk) or v2
// (@modelcontextprotocol/client), pinned in package.json — reads every one
// of them as fast as the client goes, one after another, and prints a JSON
// summary on standard output: what a client does that walks a user's
// whole inventory, under the server's rate limits.
//
//   MCPKIT_TS_SDK_DIR=~/.cache/mcpkit/ts-sdk MCPKIT_TOKEN=<token> \
//     node walk.mjs v1|v2|v2-modern http://127.0.0.1:8080/mcp [EXTRA_URI...]
//
// v2-modern is v2 pinned to protocol 2026-07-28 (server/discover, no
// session); v1 and v2 negotiate as they do by default. v1 follows
// nextCursor itself; v2 lists with client.listResources(),
// which gathers every page itself (and stops after 64: listMaxPages). The
// transport's fetch is wrapped to count the HTTP statuses the server
// answered (429s and their Retry-After included), since neither SDK
// retries a 429. EXTRA_URIs are read too, after the listed ones, and
// their text is in the summary.
//
// Exit status: 0 when every listed resource was read, 1 when not (the
// summary lists the problems), 2 when the script could not run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const MAX_PAGES = 1000;

function usage(msg) {
  process.stderr.write(`walk.mjs: ${msg}\nusage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_TOKEN=TOKEN node walk.mjs v1|v2|v2-modern MCP_URL [EXTRA_URI...]\n`);
  process.exit(2);
}

process.on('uncaughtException', (err) => {
  process.stderr.write(`walk.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});

const [variant, url, ...extra] = process.argv.slice(2);
const sdk = variant === 'v2-modern' ? 'v2' : variant;
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
const token = process.env.MCPKIT_TOKEN;
if (!['v1', 'v2', 'v2-modern'].includes(variant)) usage('the first argument is v1, v2 or v2-modern');
if (!url) usage('missing MCP_URL');
if (!sdkDir) usage('MCPKIT_TS_SDK_DIR is not set (run examples/interop/tsclient/install.sh)');
if (!token) usage('MCPKIT_TOKEN is not set');

const nm = join(sdkDir, 'node_modules', '@modelcontextprotocol');
let Client, StreamableHTTPClientTransport, sdkVersion;
try {
  if (sdk === 'v1') {
    const dir = join(nm, 'sdk');
    sdkVersion = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    ({ Client } = await import(pathToFileURL(join(dir, 'dist', 'esm', 'client', 'index.js')).href));
    ({ StreamableHTTPClientTransport } = await import(pathToFileURL(join(dir, 'dist', 'esm', 'client', 'streamableHttp.js')).href));
  } else {
    const dir = join(nm, 'client');
    sdkVersion = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    ({ Client, StreamableHTTPClientTransport } = await import(pathToFileURL(join(dir, 'dist', 'index.mjs')).href));
  }
} catch (err) {
  usage(`cannot load the ${sdk} SDK from ${nm} (run examples/interop/tsclient/install.sh): ${err?.message ?? err}`);
}

const problems = [];
const problem = (msg) => problems.push(msg);
const summary = { sdk: variant, sdkVersion, url };

// Every HTTP status the server answered, and the Retry-After of each 429.
const statuses = {};
const retryAfter = [];
let listRequests = 0;
const countingFetch = async (input, init) => {
  if (typeof init?.body === 'string' && init.body.includes('"resources/list"')) listRequests++;
  const res = await fetch(input, init);
  statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  if (res.status === 429) retryAfter.push(res.headers.get('Retry-After'));
  return res;
};

const options = variant === 'v2-modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : undefined;
const client = new Client({ name: 'mcpkit-interop-walk', version: '1.0.0' }, options);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  fetch: countingFetch,
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
summary.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null;

const errorText = (err) => String(err?.message ?? err);

const listed = [];
try {
  if (sdk === 'v1') {
    let cursor;
    let pages = 0;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      pages++;
      for (const r of page.resources) listed.push(r.uri);
      cursor = page.nextCursor;
    } while (cursor && pages < MAX_PAGES);
    if (cursor) problem(`the traversal did not end within ${MAX_PAGES} pages`);
  } else {
    const all = await client.listResources();
    for (const r of all.resources) listed.push(r.uri);
  }
} catch (err) {
  problem(`listing failed after ${listed.length} resources: ${errorText(err)}`);
}
summary.pages = listRequests;
summary.listed = listed;

let readOK = 0;
summary.readFailures = [];
for (const uri of listed) {
  try {
    const res = await client.readResource({ uri });
    if (res.contents?.[0]?.uri !== uri) problem(`read ${uri}: contents name another URI`);
    readOK++;
  } catch (err) {
    summary.readFailures.push({ uri, error: errorText(err) });
  }
}
summary.readOK = readOK;
if (summary.readFailures.length) problem(`${summary.readFailures.length} reads failed, the first: ${summary.readFailures[0].uri}: ${summary.readFailures[0].error}`);

summary.extra = [];
for (const uri of extra) {
  try {
    const res = await client.readResource({ uri });
    summary.extra.push({ uri, mimeType: res.contents?.[0]?.mimeType ?? null, text: res.contents?.[0]?.text ?? null });
  } catch (err) {
    summary.extra.push({ uri, error: errorText(err) });
    problem(`read ${uri} failed: ${errorText(err)}`);
  }
}
await client.close();

summary.statuses = statuses;
summary.retryAfter = retryAfter;
summary.problems = problems;
summary.ok = problems.length === 0;
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
process.exit(summary.ok ? 0 : 1);
