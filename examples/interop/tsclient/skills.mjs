// skills.mjs lists, gets and reads the caller's skills (the MCP Skills
// extension, SEP-2640) with the official MCP TypeScript SDK v2 client's
// SkillsClient (@modelcontextprotocol/client/ext/skills, pinned in
// package.json), which verifies every file it reads against the entry
// (size, digest, and SKILL.md's frontmatter), reads each skill's root
// directory, and tries the FOREIGN_URIs (another user's skill or
// directory): each must be refused. It prints a JSON summary.
//
//   MCPKIT_TS_SDK_DIR=~/.cache/mcpkit/ts-sdk MCPKIT_TOKEN=<token> \
//     node skills.mjs legacy|modern http://127.0.0.1:8080/mcp [FOREIGN_URI...]
//
// modern pins protocol 2026-07-28 (server/discover, cacheScope); legacy
// negotiates as the client does by default. Exit status: 0 when every
// check passed, 1 when not (the summary lists the problems), 2 when the
// script could not run.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

function usage(msg) {
  process.stderr.write(`skills.mjs: ${msg}\nusage: MCPKIT_TS_SDK_DIR=DIR MCPKIT_TOKEN=TOKEN node skills.mjs legacy|modern MCP_URL [FOREIGN_URI...]\n`);
  process.exit(2);
}
process.on('uncaughtException', (err) => {
  process.stderr.write(`skills.mjs: ${err?.stack ?? err}\n`);
  process.exit(2);
});

const [era, url, ...foreign] = process.argv.slice(2);
const sdkDir = process.env.MCPKIT_TS_SDK_DIR;
const token = process.env.MCPKIT_TOKEN;
if (!['legacy', 'modern'].includes(era)) usage('the first argument is legacy or modern');
if (!url) usage('missing MCP_URL');
if (!sdkDir || !token) usage('MCPKIT_TS_SDK_DIR and MCPKIT_TOKEN must be set');

const dir = join(sdkDir, 'node_modules', '@modelcontextprotocol', 'client');
let Client, StreamableHTTPClientTransport, SkillsClient;
try {
  ({ Client, StreamableHTTPClientTransport } = await import(pathToFileURL(join(dir, 'dist', 'index.mjs')).href));
  ({ SkillsClient } = await import(pathToFileURL(join(dir, 'dist', 'ext', 'skills', 'index.mjs')).href));
} catch (err) {
  usage(`cannot load the v2 SDK from ${dir}: ${err?.message ?? err}`);
}
const sdkVersion = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;

const problems = [];
const problem = (msg) => problems.push(msg);
const errorText = (err) => String(err?.message ?? err);
const summary = { era, sdkVersion };

const options = era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : undefined;
const client = new Client({ name: 'mcpkit-interop-skills', version: '1.0.0' }, options);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
summary.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null;

const skills = new SkillsClient(client);
summary.supported = skills.supported;
summary.directoryRead = skills.directoryRead;

summary.skills = [];
try {
  const listing = await skills.list();
  summary.cacheScope = listing.cacheScope ?? null;
  summary.ttlMs = listing.ttlMs ?? null;
  for (const entry of listing.skills) {
    const s = { uri: entry.uri, name: entry.frontmatter?.name, files: [], verified: 0 };
    summary.skills.push(s);
    for (const f of entry.resources === 'dynamic' ? [] : entry.resources) {
      s.files.push(f.uri);
      try {
        const read = await skills.read(entry, f.uri);
        if (read.verified) s.verified++;
        else problem(`${f.uri}: not verified`);
      } catch (err) {
        problem(`read ${f.uri}: ${errorText(err)}`);
      }
    }
    try {
      const got = await skills.get(entry.uri);
      if (got.skill.uri !== entry.uri) problem(`get ${entry.uri}: another skill`);
    } catch (err) {
      problem(`get ${entry.uri}: ${errorText(err)}`);
    }
    if (skills.directoryRead) {
      try {
        const d = await skills.readDirectory(entry.uri.replace(/\/SKILL\.md$/, ''));
        s.rootChildren = d.resources.map((r) => `${r.name} ${r.mimeType ?? ''}`.trim());
      } catch (err) {
        problem(`readDirectory of ${entry.uri}: ${errorText(err)}`);
      }
    }
  }
} catch (err) {
  problem(`skills/list failed: ${errorText(err)}`);
}

summary.foreign = [];
for (const uri of foreign) {
  const out = { uri };
  try {
    if (uri.endsWith('/SKILL.md')) await skills.get(uri);
    else await skills.readDirectory(uri);
    out.rejected = false;
    problem(`${uri}: answered, but it is another user's`);
  } catch (err) {
    out.rejected = true;
    out.code = err?.code ?? null;
  }
  summary.foreign.push(out);
}
await client.close();
summary.problems = problems;
summary.ok = problems.length === 0;
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
process.exit(summary.ok ? 0 : 1);
