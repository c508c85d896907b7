// Runs the @nestjs/swagger CLI plugin over src/ (read-only mode) and writes what it learns from the DTO and view
// types, optional marks and class-validator limits to src/openapi.metadata.ts, which swagger.ts loads. The plugin's
// compile-time transform cannot run under ts-jest (transpile only), so the app and the tests both use this file.
//   node scripts/openapi-metadata.mjs [outputDir]    (default: src/)
import { PluginMetadataGenerator } from '@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator.js';
import { ReadonlyVisitor } from '@nestjs/swagger/plugin';
import { fileURLToPath } from 'node:url';

export const METADATA_FILE = 'openapi.metadata.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const sourceDir = `${root}src`;
const outputDir = process.argv[2] ?? sourceDir;

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
  outputDir,
  filename: METADATA_FILE,
});
