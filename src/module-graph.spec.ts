import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = dirname(fileURLToPath(import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'test' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORTS = /^(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"](\.[^'"]+)['"]|^import\s+['"](\.[^'"]+)['"]/gms;

/**
 * The modules a file may import at run time: every import or re-export but those marked `import type` (or whose
 * every name is marked `type`). More than the build keeps (it also drops imports used only as types), so a graph
 * without cycles here has none at run time either. Dynamic import() is not an edge of the static graph.
 */
function runtimeImports(file: string): string[] {
  const imports: string[] = [];
  for (const [, typeOnly, names, from, sideEffect] of readFileSync(file, 'utf8').matchAll(IMPORTS)) {
    if (typeOnly) continue;
    const braced = /\{([^}]*)\}/.exec(names ?? '');
    const unbraced = (names ?? '').replace(/\{[^}]*\}/, '').replace(/,/g, '').trim();
    const allTypes = braced !== null && unbraced === '' && braced[1].split(',').map((name) => name.trim()).filter(Boolean).every((name) => name.startsWith('type '));
    if (allTypes) continue;
    imports.push(resolve(dirname(file), (from ?? sideEffect).replace(/\.js$/, '.ts')));
  }
  return imports;
}

/** The strongly connected components of more than one module (Tarjan): each is an import cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(relative(SRC, member));
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

// A start-up that crashed now and then under load (TypeError setting Symbol(mongoose#schemaType)) put import cycles
// under suspicion: in a cycle, which module is evaluated first, and so what the others see of it, depends on
// which one the graph is entered by. Without cycles, every module sees its imports complete, in any start order.
describe('the module graph', () => {
  it('has no import cycle at run time: no module can see another half-evaluated, whatever the start order', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(200);
    const graph = new Map(files.map((file) => [file, runtimeImports(file)]));
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const [a, b, c, d] = ['a.ts', 'b.ts', 'c.ts', 'd.ts'].map((name) => join(SRC, name));
    expect(cycles(new Map([[a, [b]], [b, [c]], [c, [a]], [d, [a]]]))).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
