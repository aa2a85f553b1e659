// Registers loader.mjs: for the conformance suite's own imports of "fs" it
// supplies fs.globSync, which Node.js added in version 22.
import { register } from 'node:module';
register('./loader.mjs', import.meta.url);
