// Runs the @nestjs/swagger CLI plugin over src/ (read-only mode) and writes what it learns from the DTO and view
// types, optional marks and class-validator limits to src/openapi.metadata.ts, which swagger.ts loads. The plugin's
// compile-time transform cannot run under ts-jest (transpile only), so the app and the tests both use this file.
// This is Nest's documented recipe for the plugin outside its tsc transform (docs.nestjs.com/recipes/swc, "Monorepo
// and CLI plugins"): PluginMetadataGenerator with @nestjs/swagger's ReadonlyVisitor.
//   node scripts/openapi-metadata.mjs [outputDir]    (default: src/)
// Into src/, it runs only when a source changed since it last did (a digest of src/ in dist/), and rewrites the file
// only when its text changes, so that `npm start` with nothing changed neither waits for the plugin (a type-checked
// program of the whole of src/) nor makes the incremental build compile the file again.
import { PluginMetadataGenerator } from '@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator.js';
import { ReadonlyVisitor } from '@nestjs/swagger/plugin';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const METADATA_FILE = 'openapi.metadata.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const sourceDir = `${root}src`;
const outputDir = process.argv[2] ?? sourceDir;
const target = join(outputDir, METADATA_FILE);
const stampFile = join(root, 'dist', '.openapi-metadata.digest');

/** A digest of everything the plugin reads: the sources (but its own output), the build's tsconfig, this script. */
function sourcesDigest() {
  const hash = createHash('sha256');
  const files = readdirSync(sourceDir, { recursive: true })
    .filter((file) => file.endsWith('.ts') && file !== METADATA_FILE)
    .sort();
  for (const file of files)
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(join(sourceDir, file)))
      .update('\0');
  for (const file of [join(root, 'tsconfig.build.json'), join(root, 'tsconfig.json'), fileURLToPath(import.meta.url)]) {
    hash.update(readFileSync(file));
  }
  return hash.digest('hex');
}

function generate(dir) {
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
  new PluginMetadataGenerator().generate({
    visitors: [visitor],
    tsProgramRef: ReadonlyVisitor.createTsProgram(`${root}tsconfig.build.json`),
    outputDir: dir,
    filename: METADATA_FILE,
  });
}

const intoSources = outputDir === sourceDir;
const digest = intoSources ? sourcesDigest() : undefined;
if (intoSources && existsSync(target) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === digest) {
  console.log(`${METADATA_FILE}: no source changed, kept`);
} else {
  const scratch = mkdtempSync(join(tmpdir(), 'parley-openapi-metadata-'));
  try {
    generate(scratch);
    const fresh = readFileSync(join(scratch, METADATA_FILE), 'utf8');
    if (!existsSync(target) || readFileSync(target, 'utf8') !== fresh) writeFileSync(target, fresh);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  if (intoSources) {
    mkdirSync(join(root, 'dist'), { recursive: true });
    writeFileSync(stampFile, digest);
  }
}
