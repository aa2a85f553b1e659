// subscribe.mjs: the fleet test's TypeScript SDK v1 client
// (@modelcontextprotocol/sdk, as pinned by examples/interop/tsclient):
// it connects through the balancer in the legacy era (a session that
// Redis shares), subscribes to URI, prints {"ready":true,...}, and prints
// {"done":true,...} with the notifications it saw once it has seen
// notifications/resources/updated for URI (or standard input closed).
//
//   MCPKIT_TS_SDK_DIR=DIR MCPKIT_TOKEN=TOKEN node subscribe.mjs MCP_URL URI
//
// Exit status: 0 after the summary, 2 when it could not run.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';

process.on('uncaughtException', (err) => {
  process.stderr.write(`subscribe.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});
const [url, uri] = process.argv.slice(2);
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
const token = process.env.MCPKIT_TOKEN;
if (!url || !uri || !sdkDir || !token) {
  process.stderr.write('usage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_TOKEN=TOKEN node subscribe.mjs MCP_URL URI\n');
  process.exit(2);
}
const load = (rel) => import(pathToFileURL(join(sdkDir, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', rel)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const types = await load('types.js');

const seen = { updated: {}, listChanged: 0 };
let finish;
const finished = new Promise((resolve) => { finish = resolve; });
const client = new Client({ name: 'mcpkit-fleet', version: '1.0.0' });
client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, (n) => {
  seen.updated[n.params.uri] = (seen.updated[n.params.uri] ?? 0) + 1;
  if (n.params.uri === uri) finish();
});
client.setNotificationHandler(types.ResourceListChangedNotificationSchema, () => { seen.listChanged++; });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
await client.connect(transport);
await client.subscribeResource({ uri });
process.stdout.write(JSON.stringify({ ready: true, protocolVersion: transport.protocolVersion ?? null, session: Boolean(transport.sessionId) }) + '\n');
const stdin = createInterface({ input: process.stdin });
stdin.on('close', finish);
await finished;
stdin.close();
process.stdout.write(JSON.stringify({ done: true, ...seen }) + '\n');
await client.close();
process.exit(0);
