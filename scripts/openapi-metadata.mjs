// Runs the @nestjs/swagger CLI plugin over src/ (read-only mode) and writes what it learns from the DTO and view
// types, optional marks and class-validator limits to src/openapi.metadata.ts, which swagger.ts loads. The plugin's
// compile-time transform cannot run under ts-jest (transpile only), so the app and the tests both use this file.
// Nest's recipe for the plugin outside its tsc transform (docs.nestjs.com/recipes/swc, "Monorepo and CLI plugins")
// drives @nestjs/swagger's ReadonlyVisitor with the CLI's PluginMetadataGenerator, which only @nestjs/cli/lib's
// internals export. Here the same three steps use public entry points only: the visitor (@nestjs/swagger/plugin)
// visits every source file of the program and collects, and TypeScript's printer writes the module the visitor's
// metadata loader reads (`export default async () => { const t = {...}; return {...} }`). Since the visitor runs
// with esmCompatible, its import specifiers already carry the `.js` that nodenext resolution needs.
//   node scripts/openapi-metadata.mjs [outputDir]    (default: src/)
// Into src/, it runs only when what it reads or writes changed since it last did (a stamp in dist/, see
// build-stamp.mjs), and rewrites the file only when its text changes, so that `npm start` with nothing changed
// neither waits for the plugin (a type-checked program of the whole of src/) nor makes the incremental build compile
// the file again. The plugin and TypeScript load only when it runs: loading them alone takes seconds.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isStampCurrent, writeStamp } from './build-stamp.mjs';

export const METADATA_FILE = 'openapi.metadata.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const sourceDir = `${root}src`;
const outputDir = process.argv[2] ?? sourceDir;
const target = join(outputDir, METADATA_FILE);
const stampFile = join(root, 'dist', '.openapi-metadata.stamp');

/**
 * What the stamp covers: everything the plugin reads (the sources, the build's tsconfig, this script, the plugin's
 * version) and the file it writes.
 */
function stampedFiles() {
  const sources = readdirSync(sourceDir, { recursive: true })
    .filter((file) => file.endsWith('.ts') && file !== METADATA_FILE)
    .sort()
    .map((file) => join(sourceDir, file));
  const plugin = createRequire(import.meta.url).resolve('@nestjs/swagger/package.json');
  const settings = [join(root, 'tsconfig.build.json'), join(root, 'tsconfig.json'), fileURLToPath(import.meta.url), plugin];
  return [...sources, ...settings, target];
}

/** The metadata module's text: what the plugin's compile-time transform would have attached to each class. */
async function generate() {
  const { ReadonlyVisitor } = await import('@nestjs/swagger/plugin');
  const { default: ts } = await import('typescript');
  const visitor = new ReadonlyVisitor({
    pathToSource: sourceDir,
    // Response classes are views (`<resource>.view.ts`); request classes are DTOs.
    dtoFileNameSuffix: ['.dto.ts', '.view.ts'],
    // Doc comments of DTO and view properties become their descriptions.
    introspectComments: true,
    // Controllers document their operations with @ApiOperation; the plugin adds only response types.
    controllerFileNameSuffix: ['.controller.ts'],
    esmCompatible: true,
  });
  const program = ReadonlyVisitor.createTsProgram(`${root}tsconfig.build.json`);
  for (const sourceFile of program.getSourceFiles()) {
    if (!sourceFile.isDeclarationFile) visitor.visit(program, sourceFile);
  }
  const { factory } = ts;
  const property = (name, value) => factory.createPropertyAssignment(factory.createStringLiteral(name), value);
  // The collected metadata nests plain objects (visitor key, section, class, controller method) down to the
  // plugin's expressions; a section is a list of [import("./file.js"), { Class: ... }] pairs.
  const literal = (value) =>
    ts.isObjectLiteralExpression(value)
      ? value
      : factory.createObjectLiteralExpression(Object.entries(value).map(([name, inner]) => property(name, literal(inner))));
  const section = (entries) =>
    factory.createArrayLiteralExpression(
      entries.map(([importExpression, classes]) => factory.createArrayLiteralExpression([importExpression, literal(classes)])),
    );
  const collected = visitor.collect();
  const metadata = factory.createObjectLiteralExpression([
    property(
      visitor.key,
      factory.createObjectLiteralExpression(Object.entries(collected).map(([name, entries]) => property(name, section(entries)))),
    ),
  ]);
  // const t = { ["./x.view.js"]: await import("./x.view.js"), ... }: the modules the metadata's types come from.
  const typeImports = factory.createVariableStatement(
    undefined,
    factory.createVariableDeclarationList(
      [
        factory.createVariableDeclaration(
          't',
          undefined,
          undefined,
          factory.createObjectLiteralExpression(
            Object.entries(visitor.typeImports).map(([path, importExpression]) =>
              factory.createPropertyAssignment(
                factory.createComputedPropertyName(factory.createStringLiteral(path)),
                factory.createIdentifier(importExpression),
              ),
            ),
            true,
          ),
        ),
      ],
      ts.NodeFlags.Const,
    ),
  );
  const module = factory.createExportAssignment(
    undefined,
    undefined,
    factory.createArrowFunction(
      [factory.createToken(ts.SyntaxKind.AsyncKeyword)],
      undefined,
      [],
      undefined,
      factory.createToken(ts.SyntaxKind.EqualsGreaterThanToken),
      factory.createBlock([typeImports, factory.createReturnStatement(metadata)], true),
    ),
  );
  const file = ts.createSourceFile(METADATA_FILE, '', ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  return `/* eslint-disable */\n${ts.createPrinter({ newLine: ts.NewLineKind.LineFeed }).printNode(ts.EmitHint.Unspecified, module, file)}`;
}

const intoSources = outputDir === sourceDir;
if (intoSources && isStampCurrent(stampFile, stampedFiles())) {
  console.log(`${METADATA_FILE}: no source changed, kept`);
} else {
  const fresh = await generate();
  if (!existsSync(target) || readFileSync(target, 'utf8') !== fresh) writeFileSync(target, fresh);
  if (intoSources) writeStamp(stampFile, stampedFiles());
}
