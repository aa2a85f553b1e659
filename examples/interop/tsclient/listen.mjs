// listen.mjs drives an mcpkit server with the official MCP TypeScript SDK
// v2 client (@modelcontextprotocol/client, pinned in package.json) in the
// 2026-07-28 era: it opens a subscriptions/listen stream with listen(),
// closes the subscription, then lists resources again, and prints a JSON
// summary on standard output: the negotiated version, the honored filter,
// how the subscription ended, and every HTTP request the client sent with
// the status the server answered (the JSON-RPC method, whether it was a
// notification, the Mcp-Method and MCP-Protocol-Version headers).
//
//   MCPKIT_TS_SDK_DIR=~/.cache/mcpkit/ts-sdk MCPKIT_TOKEN=<alice's token> \
//     node listen.mjs http://127.0.0.1:8080/mcp
//
// Exit status: 0 when every check passed, 1 when one failed (the summary
// lists the problems), 2 when the script could not run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function usage(msg) {
  process.stderr.write(`listen.mjs: ${msg}\nusage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_TOKEN=TOKEN node listen.mjs MCP_URL\n`);
  process.exit(2);
}

process.on('uncaughtException', (err) => {
  process.stderr.write(`listen.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});

const [url] = process.argv.slice(2);
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
const token = process.env.MCPKIT_TOKEN;
if (!url) usage('missing MCP_URL');
if (!sdkDir) usage('MCPKIT_TS_SDK_DIR is not set (run examples/interop/tsclient/install.sh)');
if (!token) usage('MCPKIT_TOKEN is not set');

const pkgDir = join(sdkDir, 'node_modules', '@modelcontextprotocol', 'client');
let sdkVersion;
try {
  sdkVersion = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
} catch {
  usage(`no @modelcontextprotocol/client under ${sdkDir}/node_modules (run examples/interop/tsclient/install.sh)`);
}
const { Client, StreamableHTTPClientTransport } = await import(pathToFileURL(join(pkgDir, 'dist', 'index.mjs')).href);

const problems = [];
const problem = (msg) => problems.push(msg);

// Every request the client sends, and what came back.
const exchanges = [];
const pending = new Set();
const recordingFetch = async (input, init = {}) => {
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  const ex = {
    httpMethod: init.method ?? (input instanceof Request ? input.method : 'GET'),
    mcpMethod: headers.get('mcp-method'),
    version: headers.get('mcp-protocol-version'),
  };
  if (typeof init.body === 'string') {
    try {
      const msg = JSON.parse(init.body);
      ex.rpcMethod = msg.method ?? null;
      ex.notification = msg.method !== undefined && msg.id === undefined;
      ex.hasMeta = msg.params?._meta !== undefined;
    } catch {
      ex.rpcMethod = null;
    }
  }
  exchanges.push(ex);
  const p = (async () => {
    try {
      const res = await fetch(input, init);
      ex.status = res.status;
      return res;
    } catch (err) {
      ex.error = String(err?.name ?? err);
      throw err;
    }
  })();
  pending.add(p);
  p.catch(() => {}).finally(() => pending.delete(p));
  return p;
};

const summary = { sdkVersion, url };
const client = new Client({ name: 'mcpkit-interop-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
  fetch: recordingFetch,
});
await client.connect(transport);
summary.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null;
summary.subscribeCapability = Boolean(client.getServerCapabilities()?.resources?.subscribe);

const first = await client.listResources({});
const doc = first.resources.find((r) => r.uri.startsWith('docs://documents/'))?.uri;
if (!doc) problem('no document listed');

const sub = await client.listen({ resourcesListChanged: true, resourceSubscriptions: doc ? [doc] : [] });
summary.honoredFilter = sub.honoredFilter;
await sub.close();
summary.closed = await sub.closed;
// close() sends notifications/cancelled; wait until every request has its answer.
for (let i = 0; i < 100 && pending.size > 0; i++) await Promise.allSettled([...pending]);

try {
  const again = await client.listResources({});
  summary.listAfterClose = again.resources.length;
} catch (err) {
  problem(`resources/list after close failed: ${err?.message ?? err}`);
}
await client.close();
for (let i = 0; i < 100 && pending.size > 0; i++) await Promise.allSettled([...pending]);

summary.exchanges = exchanges;
for (const ex of exchanges) {
  if (ex.status === 400) problem(`HTTP 400 for ${ex.httpMethod} ${ex.rpcMethod ?? ''}`);
}
if (!exchanges.some((ex) => ex.rpcMethod === 'notifications/cancelled')) problem('close() sent no notifications/cancelled');
summary.problems = problems;
summary.ok = problems.length === 0;
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
process.exit(summary.ok ? 0 : 1);
