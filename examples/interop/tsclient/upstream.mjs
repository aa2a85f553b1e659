// upstream.mjs walks the URL-mode elicitation of examples/upstream with the
// official MCP TypeScript SDK v2 client (@modelcontextprotocol/client,
// pinned in package.json), declaring the elicitation.url capability:
//
//   MCPKIT_TS_SDK_DIR=~/.cache/mcpkit/ts-sdk MCPKIT_TOKEN=<token> \
//     node upstream.mjs legacy|modern http://127.0.0.1:8095/mcp URI
//
// legacy (2025-11-25): resources/list answers -32042
// (UrlElicitationRequiredError); modern (2026-07-28): resources/read of URI
// answers input_required, which the SDK hands to the elicitation/create
// handler. Either way the script prints {"elicit":URL} as one line on
// standard output and waits for one line on standard input (the person,
// here the Go test, approving in a browser), then retries (legacy) or
// accepts (modern: the SDK retries) and prints a JSON summary line.
// Exit status: 0 when the retry succeeded, 1 when not, 2 when the script
// could not run.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';

function usage(msg) {
  process.stderr.write(`upstream.mjs: ${msg}\nusage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_TOKEN=TOKEN node upstream.mjs legacy|modern MCP_URL URI\n`);
  process.exit(2);
}
process.on('uncaughtException', (err) => {
  process.stderr.write(`upstream.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});

const [era, url, uri] = process.argv.slice(2);
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
const token = process.env.MCPKIT_TOKEN;
if (!['legacy', 'modern'].includes(era)) usage('the first argument is legacy or modern');
if (!url || !uri) usage('missing MCP_URL or URI');
if (!sdkDir || !token) usage('MCPKIT_TS_SDK_DIR and MCPKIT_TOKEN must be set');

const dir = join(sdkDir, 'node_modules', '@modelcontextprotocol', 'client');
let Client, StreamableHTTPClientTransport;
try {
  ({ Client, StreamableHTTPClientTransport } = await import(pathToFileURL(join(dir, 'dist', 'index.mjs')).href));
} catch (err) {
  usage(`cannot load the v2 SDK from ${dir}: ${err?.message ?? err}`);
}
const sdkVersion = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
// approve shows the URL and waits until the person says they are done.
async function approve(link) {
  process.stdout.write(JSON.stringify({ elicit: link }) + '\n');
  const { done } = await lines.next();
  if (done) throw new Error('standard input closed before the approval');
}

const summary = { era, sdkVersion, elicitations: 0 };
const options = { capabilities: { elicitation: { url: {} } } };
if (era === 'modern') options.versionNegotiation = { mode: { pin: '2026-07-28' } };
const client = new Client({ name: 'mcpkit-interop-upstream', version: '1.0.0' }, options);
client.setRequestHandler('elicitation/create', async (request) => {
  const p = request.params;
  if (p.mode !== 'url' || typeof p.url !== 'string') return { action: 'decline' };
  summary.elicitations++;
  summary.elicitationId = p.elicitationId;
  await approve(p.url);
  return { action: 'accept' };
});
client.setNotificationHandler('notifications/elicitation/complete', (n) => {
  summary.completed = n.params?.elicitationId ?? null;
});
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
summary.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null;

let ok = false;
try {
  if (era === 'legacy') {
    try {
      await client.listResources();
      summary.error = 'resources/list succeeded before any approval';
    } catch (err) {
      const els = err?.data?.elicitations ?? err?.elicitations;
      if (err?.code !== -32042 || !Array.isArray(els) || els.length !== 1) throw err;
      summary.elicitations++;
      summary.elicitationId = els[0].elicitationId;
      await approve(els[0].url);
      const listed = await client.listResources();
      summary.uris = listed.resources.map((r) => r.uri);
      ok = summary.uris.includes(uri);
    }
  } else {
    const read = await client.readResource({ uri });
    summary.text = read.contents?.[0]?.text ?? null;
    ok = summary.elicitations === 1 && typeof summary.text === 'string';
  }
} catch (err) {
  summary.error = String(err?.message ?? err);
}
await client.close();
process.stdout.write(JSON.stringify(summary) + '\n');
process.exit(ok ? 0 : 1);
