// tools.mjs drives mcpkit's tools bridge with an official MCP TypeScript
// SDK client — v1 (@modelcontextprotocol/sdk) or v2
// (@modelcontextprotocol/client), both pinned in package.json — and prints
// a JSON summary of what it saw on standard output.
//
//   MCPKIT_TS_SDK_DIR=~/.cache/mcpkit/ts-sdk MCPKIT_TOKEN=<alice's token> \
//     node tools.mjs v1|v2 legacy|modern http://127.0.0.1:8080/mcp QUERY [FOREIGN_URI...]
//
// legacy connects with initialize (the newest legacy version the SDK
// speaks); modern (v2 only) pins protocol 2026-07-28 (server/discover,
// per-request _meta, Mcp-Name). With the token it lists the tools, calls
// list_resources through every nextCursor (checking the text item against
// structuredContent), read_resource on every listed URI, search(QUERY) and
// fetch on every result, and read_resource and fetch on each FOREIGN_URI
// (another user's resources) and on a URI that does not exist: those must
// be tool errors, and the same one.
//
// Exit status: 0 when every check passed, 1 when one failed (the summary
// lists the problems), 2 when the script could not run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const MAX_PAGES = 1000;

function usage(msg) {
  process.stderr.write(`tools.mjs: ${msg}\nusage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_TOKEN=TOKEN node tools.mjs v1|v2 legacy|modern MCP_URL QUERY [FOREIGN_URI...]\n`);
  process.exit(2);
}

process.on('uncaughtException', (err) => {
  process.stderr.write(`tools.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});

const [sdk, era, url, query, ...foreign] = process.argv.slice(2);
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
const token = process.env.MCPKIT_TOKEN;
if (sdk !== 'v1' && sdk !== 'v2') usage('the first argument is v1 or v2');
if (era !== 'legacy' && era !== 'modern') usage('the second argument is legacy or modern');
if (sdk === 'v1' && era === 'modern') usage('the v1 SDK speaks the legacy protocols only');
if (!url || !query) usage('missing MCP_URL or QUERY');
if (!sdkDir) usage('MCPKIT_TS_SDK_DIR is not set (run examples/interop/tsclient/install.sh)');
if (!token) usage('MCPKIT_TOKEN is not set');

// The SDKs are loaded from the cache directory by file URL.
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
const summary = { sdk, sdkVersion, era, url };

const options = sdk === 'v2' && era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : undefined;
const client = new Client({ name: 'mcpkit-interop-tools', version: '1.0.0' }, options);
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
await client.connect(transport);
summary.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null;
summary.toolsCapability = Boolean(client.getServerCapabilities()?.tools);

// The tools alice may use, with their annotations.
const tools = await client.listTools();
summary.tools = tools.tools.map((t) => t.name);
for (const t of tools.tools) {
  if (t.annotations?.readOnlyHint !== true) problem(`${t.name} is not marked readOnlyHint`);
}

// The text of a result's single text item; a problem otherwise.
function textOf(name, res) {
  if (!Array.isArray(res.content) || res.content.length !== 1 || res.content[0].type !== 'text') {
    problem(`${name}: not one text item: ${JSON.stringify(res.content)}`);
    return null;
  }
  return res.content[0].text;
}

// list_resources to the end.
const listed = [];
let cursor;
let pages = 0;
do {
  const res = await client.callTool({ name: 'list_resources', arguments: cursor === undefined ? {} : { cursor } });
  pages++;
  if (res.isError) {
    problem(`list_resources page ${pages}: ${JSON.stringify(res.content)}`);
    break;
  }
  const text = textOf('list_resources', res);
  const page = res.structuredContent ?? JSON.parse(text);
  if (text !== null && JSON.stringify(JSON.parse(text)) !== JSON.stringify(page)) problem('list_resources: the text is not the structured page');
  for (const r of page.resources) listed.push(r.uri);
  cursor = page.nextCursor;
  if (cursor === '') problem('an empty nextCursor was sent instead of none');
} while (cursor && pages < MAX_PAGES);
if (cursor) problem(`the traversal did not end within ${MAX_PAGES} pages`);
summary.pages = pages;
summary.listed = listed;
summary.foreignListed = listed.filter((u) => foreign.includes(u));

// read_resource on every listed URI.
summary.read = [];
for (const uri of listed) {
  const res = await client.callTool({ name: 'read_resource', arguments: { uri } });
  const c = res.content?.[0];
  const ok = !res.isError && Boolean(c) && (c.type === 'text' ? c.text.length > 0 : c.resource?.uri === uri);
  summary.read.push({ uri, ok, type: c?.type ?? null });
  if (!ok) problem(`read_resource ${uri}: ${JSON.stringify(res)}`);
}

// search, then fetch every result.
summary.search = [];
{
  const res = await client.callTool({ name: 'search', arguments: { query } });
  const text = textOf('search', res);
  const parsed = text === null ? { results: [] } : JSON.parse(text);
  if (Object.keys(parsed).join() !== 'results') problem(`search: members ${Object.keys(parsed)}`);
  for (const hit of parsed.results) {
    if (Object.keys(hit).sort().join() !== 'id,title,url') problem(`search: a result has members ${Object.keys(hit)}`);
    const got = await client.callTool({ name: 'fetch', arguments: { id: hit.id } });
    const ftext = got.isError ? null : textOf('fetch', got);
    const doc = ftext === null ? null : JSON.parse(ftext);
    if (doc && Object.keys(doc).sort().join() !== 'id,metadata,text,title,url') problem(`fetch: members ${Object.keys(doc)}`);
    summary.search.push({ id: hit.id, title: hit.title, url: hit.url, fetched: Boolean(doc), fetchedTitle: doc?.title ?? null, textBytes: doc?.text?.length ?? 0 });
    if (!doc) problem(`fetch ${hit.id} failed`);
  }
}

// Another user's resources answer like missing ones, in both tools.
const missingURI = 'docs://documents/no-such-document';
const answer = async (name, args) => {
  const res = await client.callTool({ name, arguments: args });
  return { isError: Boolean(res.isError), content: res.content };
};
const missingRead = await answer('read_resource', { uri: missingURI });
const missingFetch = await answer('fetch', { id: missingURI });
summary.missing = { read: missingRead, fetch: missingFetch };
summary.foreign = [];
for (const uri of foreign) {
  const read = await answer('read_resource', { uri });
  const fetch = await answer('fetch', { id: uri });
  const likeMissing = JSON.stringify(read) === JSON.stringify(missingRead) && JSON.stringify(fetch) === JSON.stringify(missingFetch);
  summary.foreign.push({ uri, readError: read.isError, fetchError: fetch.isError, likeMissing });
  if (!read.isError || !fetch.isError || !likeMissing) problem(`foreign ${uri} is not answered like a missing one`);
}
await client.close();

summary.problems = problems;
summary.ok = problems.length === 0;
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
process.exit(summary.ok ? 0 : 1);
