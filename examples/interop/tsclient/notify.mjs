// notify.mjs waits for per-caller change notifications with the official
// MCP TypeScript SDK: v1 (@modelcontextprotocol/sdk) in the legacy era
// (resources/subscribe, the session's GET stream), v2
// (@modelcontextprotocol/client) in the 2026-07-28 era (listen()), and
// v2 in the legacy era too (pinned to ERA). It is
// driven by a Go test through standard input and output, one JSON object
// per line:
//
//   - after connecting and subscribing to URI, it prints
//     {"ready":true,...} with what it negotiated;
//   - the test then publishes the caller's events; the script prints
//     {"done":true,...} once it has seen notifications/resources/updated
//     for URI and notifications/resources/list_changed — or, when the test
//     closes standard input first, with what it had seen — and exits.
//
//   MCPKIT_TS_SDK_DIR=~/.cache/mcpkit/ts-sdk MCPKIT_TOKEN=<token> \
//     node notify.mjs v1|v2 ERA MCP_URL URI
//
// Every notification is counted (updated by URI, list_changed, tools
// list_changed), so the test can tell that nobody else's arrived. Exit
// status: 0 after a summary, 2 when the script could not run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';

function usage(msg) {
  process.stderr.write(`notify.mjs: ${msg}\nusage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_TOKEN=TOKEN node notify.mjs v1|v2 ERA MCP_URL URI\n`);
  process.exit(2);
}

process.on('uncaughtException', (err) => {
  process.stderr.write(`notify.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});

const [sdk, era, url, uri] = process.argv.slice(2);
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
const token = process.env.MCPKIT_TOKEN;
if (sdk !== 'v1' && sdk !== 'v2') usage('the first argument is v1 or v2');
if (!era || !url || !uri) usage('missing ERA, MCP_URL or URI');
if (sdk === 'v1' && era === '2026-07-28') usage('v1 speaks the legacy era only');
if (!sdkDir) usage('MCPKIT_TS_SDK_DIR is not set (run examples/interop/tsclient/install.sh)');
if (!token) usage('MCPKIT_TOKEN is not set');

const pkgDir = join(sdkDir, 'node_modules', '@modelcontextprotocol', sdk === 'v1' ? 'sdk' : 'client');
let sdkVersion;
try {
  sdkVersion = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
} catch {
  usage(`no SDK ${sdk} under ${sdkDir}/node_modules (run examples/interop/tsclient/install.sh)`);
}

const seen = { updated: {}, listChanged: 0, toolsListChanged: 0 };
let finish;
const finished = new Promise((resolve) => { finish = resolve; });
const check = () => { if (seen.updated[uri] > 0 && seen.listChanged > 0) finish(); };
const onUpdated = (n) => { seen.updated[n.params.uri] = (seen.updated[n.params.uri] ?? 0) + 1; check(); };
const onListChanged = () => { seen.listChanged++; check(); };
const onToolsListChanged = () => { seen.toolsListChanged++; };

const headers = { Authorization: `Bearer ${token}` };
let client, subscription;
const ready = { ready: true, sdk, sdkVersion };
if (sdk === 'v1') {
  const load = (rel) => import(pathToFileURL(join(pkgDir, 'dist', 'esm', rel)).href);
  const { Client } = await load('client/index.js');
  const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
  const types = await load('types.js');
  client = new Client({ name: 'mcpkit-interop-notify', version: '1.0.0' });
  client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, onUpdated);
  client.setNotificationHandler(types.ResourceListChangedNotificationSchema, onListChanged);
  client.setNotificationHandler(types.ToolListChangedNotificationSchema, onToolsListChanged);
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  ready.protocolVersion = transport.protocolVersion ?? null;
  ready.sessionId = Boolean(transport.sessionId);
  await client.subscribeResource({ uri });
} else {
  const { Client, StreamableHTTPClientTransport } = await import(pathToFileURL(join(pkgDir, 'dist', 'index.mjs')).href);
  client = new Client({ name: 'mcpkit-interop-notify', version: '1.0.0' }, { versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' } });
  client.setNotificationHandler('notifications/resources/updated', onUpdated);
  client.setNotificationHandler('notifications/resources/list_changed', onListChanged);
  client.setNotificationHandler('notifications/tools/list_changed', onToolsListChanged);
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  ready.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? null;
  ready.sessionId = Boolean(transport.sessionId);
  if (era === '2026-07-28') {
    subscription = await client.listen({ resourcesListChanged: true, resourceSubscriptions: [uri] });
    ready.honoredFilter = subscription.honoredFilter;
  } else {
    await client.subscribeResource({ uri });
  }
}
const caps = client.getServerCapabilities() ?? {};
ready.subscribeCapability = Boolean(caps.resources?.subscribe);
ready.listChangedCapability = Boolean(caps.resources?.listChanged);
// The legacy server's own tool still answers through the wrapper.
const echo = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
ready.echo = echo.content?.[0]?.text ?? null;
process.stdout.write(JSON.stringify(ready) + '\n');

// Standard input closing (the test gave up, or is done) ends the wait.
const stdin = createInterface({ input: process.stdin });
stdin.on('close', finish);
await finished;
stdin.close();
// A moment for anything that would arrive uninvited (another caller's
// event published before ours) to be counted.
await new Promise((r) => setTimeout(r, 200));
process.stdout.write(JSON.stringify({ done: true, ...seen }) + '\n');
if (subscription) await subscription.close();
await client.close();
process.exit(0);
