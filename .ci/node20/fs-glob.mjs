// node:fs with a minimal globSync ("*", "**", "?") for Node.js 20.
import * as fs from 'node:fs';
import * as path from 'node:path';
export * from 'node:fs';
export default fs.default ?? fs;

function matcher(glob) {
  let src = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      src += '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') {
      src += '[^/]*';
    } else if (c === '?') {
      src += '[^/]';
    } else {
      src += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${src}$`);
}

export function globSync(patterns, options = {}) {
  const res = (Array.isArray(patterns) ? patterns : [patterns]).map(matcher);
  const root = options.cwd ?? process.cwd();
  const found = [];
  const visit = (dir, rel) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const name = rel ? `${rel}/${e.name}` : e.name;
      if (res.some((re) => re.test(name))) found.push(name);
      if (e.isDirectory()) visit(path.join(dir, e.name), name);
    }
  };
  visit(root, '');
  return found;
}
