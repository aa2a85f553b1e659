// Package skills serves the MCP Skills extension (SEP-2640,
// io.modelcontextprotocol/skills) per caller, with the guarantees package
// inventory gives resources/list: each signed-in user sees the skills they
// may use, from the application's own store, in bounded pages.
//
// A skill is a directory of files with a SKILL.md at its root. Its files
// are ordinary resources of the inventory: a protected template (the
// Source's Template) whose Read handler applies record ownership serves
// them through resources/read, with access checked again on every read.
// The application gives two callbacks:
//
//   - List: "the next at most Limit skills of this caller, strictly after
//     key After" — inventory's list contract (keyset keys, strictly
//     increasing, Limit+1 rows to learn HasMore, ownership in the query),
//     with a Skill for an entry. Every page is checked with
//     inventory.ValidatePage and every skill with Validate; a violation is
//     a generic internal error to the client and an Error record (method,
//     source, rule, entry) for the operator.
//   - Get: one skill by its SKILL.md URI, or inventory.ErrNotFound — also
//     for another caller's skill, so that it looks exactly like a URI that
//     does not exist.
//
// A Catalog serves them. As an mcphttp Part it registers
//
//   - skills/list: pages of at most Options.PageSize skills, also ended by
//     the endpoint's byte budget; an entry is atomic (a skill that cannot
//     fit an empty page is the application's error: logged, a generic
//     internal error to the client); nextCursor is sealed with package
//     sealedcursor and bound to the caller's identity, the catalog's
//     settings and the method, and expires 15 minutes after the first page
//     (a tampered, foreign or expired cursor is -32602 with data.reason);
//   - skills/get: no cursor; an unknown URI, one the caller may not read,
//     and another caller's skill are all -32602 with data.uri;
//   - resources/directory/read (Options.DirectoryRead): the direct
//     children of a skill's directory, from its manifest, paged and sealed
//     the same way; subdirectories are inode/directory without a trailing
//     slash; a file or an unknown URI is -32602;
//
// and declares {"io.modelcontextprotocol/skills":{…}} under
// capabilities.extensions in initialize and server/discover. Results are
// private in both eras: Cache-Control: private and, in 2026-07-28, ttlMs 0
// and cacheScope "private", since what a caller sees depends on who it is.
//
// The source's template decides who may use it, as for templates: a caller
// who may not read it (scopes, owner identity, gates, overrides) lists no
// skills, and gets -32602 for any skill or directory — except a caller who
// lacks only the template's scopes (with them its identity, the owner and
// the gates would admit it): its skills/list gets the 403
// insufficient_scope challenge naming them, as resources/list does, so
// that the client can step up.
//
// # Building entries
//
// An application with its skills' files at hand lets the kit derive the
// entry: [Build] takes a skill's directory URI and its files (path and
// bytes) and fills in the SKILL.md URI, the frontmatter rendered from
// SKILL.md's YAML ([Frontmatter]), and each file's URI, digest and size;
// a [GetFunc] receives the requested skill's directory and name already
// parsed (GetRequest.Dir, GetRequest.Name). examples/skills serves a
// per-user skills folder from disk this way.
//
// # Digests and sizes
//
// An application that stores its files may store their digests and sizes
// with them ([Digest] and len, from the very bytes its Read handler serves;
// the documents example does) and fill a [Skill] itself, without reading
// every file on every listing. The kit checks their form on every entry it
// serves (sha256: and 64 lowercase hexadecimal digits, a size that is not
// negative, at most MaxFiles files and MaxTotalSize bytes per skill, every
// file once and within the skill's directory, SKILL.md among them). Package
// skillstest reads every file back through resources/read's path and
// reports digests, sizes and frontmatter names that do not match.
package skills
