/**
 * Dependencies inside packages/loadgen/src point one way: a module never imports (directly or
 * through others) a module that imports it. Read with the TypeScript compiler's parser: static
 * imports and re-exports (type-only ones too: they tie the modules' meaning together), and
 * `import('./x.js')` calls. Test files are left out; they import whatever they test.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('.', import.meta.url));

/** Every non-test `.ts` file under `dir`, sorted (directory listing order is not stable). */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out.sort();
}

/** The relative module specifiers `file`'s text imports, re-exports or dynamically imports. */
export function relativeImports(fileName: string, text: string): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const specs: string[] = [];
  const visit = (node: ts.Node): void => {
    let spec: ts.Expression | undefined;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) spec = node.moduleSpecifier;
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) spec = node.arguments[0];
    if (spec !== undefined && ts.isStringLiteral(spec) && spec.text.startsWith('.')) specs.push(spec.text);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return specs;
}

/** Module -> the modules it imports, over `files` (paths relative to `root`, `.ts`). */
function importGraph(root: string, files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const known = new Set(files.map((f) => relative(root, f)));
  for (const file of files) {
    const deps = relativeImports(file, readFileSync(file, 'utf8'))
      .map((spec) => relative(root, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))))
      .filter((dep) => known.has(dep));
    graph.set(relative(root, file), [...new Set(deps)].sort());
  }
  return graph;
}

/** The strongly connected components with more than one module, or one that imports itself (Tarjan). */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return cycles;
}

describe('import cycles in packages/loadgen/src', () => {
  it('finds the imports of every kind the loadgen uses', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "export type { D } from './d.js';",
      "const e = await import('./e.js');",
      "import ws from 'ws';",
      "const worker = new URL('./worker.js', import.meta.url);",
    ].join('\n');
    expect(relativeImports('x.ts', text)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js']);
  });

  it('reports a cycle through several modules and a module importing itself, and nothing for a chain', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', ['e.ts']],
      ['e.ts', []],
      ['f.ts', ['f.ts']],
    ]);
    expect(importCycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['f.ts']]);
    expect(importCycles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', []]]))).toEqual([]);
  });

  it('has none', () => {
    const graph = importGraph(SRC, sourceFiles(SRC));
    expect(graph.get('cli.ts')).toContain('commands/commands.ts'); // the walk found the tree and its imports
    expect(importCycles(graph)).toEqual([]);
  });
});
