// Module resolve hook: only modules inside the conformance package that
// import "fs" get fs-glob.mjs (node:fs plus a small globSync).
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: new URL('./fs-glob.mjs', import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
