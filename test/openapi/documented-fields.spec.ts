import { describe, expect, it } from '@jest/globals';
import { getMetadataStorage } from 'class-validator';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildOpenApiDocument } from '../../src/swagger.js';
import { createTestApp } from '../support/test-app.js';

/** Constraints that say a field is refused or conditional, not that it is taken. */
const NOT_TAKEN = new Set(['neverChanges', 'conditionalValidation']);

async function dtoFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.dto.ts')).map((entry) => join(entry.parentPath, entry.name));
}

/**
 * The Swagger plugin documents only exported classes: a field a body validates but declares in a base class that is
 * not exported is taken by the API and missing from the document and the typed client. Every field a documented body
 * validates must be listed in its schema.
 */
describe('documented bodies', () => {
  it('list every field their DTO validates, inherited ones included', async () => {
    const t = await createTestApp();
    const schemas = buildOpenApiDocument(t.app).components?.schemas ?? {};
    await t.close();
    const storage = getMetadataStorage();
    const missing: string[] = [];
    let checked = 0;
    for (const file of await dtoFiles(join(process.cwd(), 'src'))) {
      const exported: Record<string, unknown> = await import(pathToFileURL(file).href);
      for (const [name, value] of Object.entries(exported)) {
        const schema = schemas[name] as { properties?: Record<string, unknown> } | undefined;
        if (typeof value !== 'function' || !schema) continue;
        const taken = storage
          .getTargetValidationMetadatas(value, '', false, false)
          .filter((metadata) => !NOT_TAKEN.has(metadata.name ?? metadata.type))
          .map((metadata) => metadata.propertyName);
        if (taken.length > 0) checked += 1;
        for (const property of new Set(taken)) {
          if (!schema.properties?.[property]) missing.push(`${relative(process.cwd(), file)}: ${name}.${property}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });
});
