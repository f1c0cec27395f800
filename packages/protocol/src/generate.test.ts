import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The schema is the one definition; every file generated from it is committed. CI regenerates
// them and fails on any difference, so a hand edit of a generated file (or a schema edit without
// regenerating) cannot land.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const generator = join(root, 'packages/protocol/scripts/generate.mjs');
const out = mkdtempSync(join(tmpdir(), 'tidewire-protocol-generate-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

interface Generator {
  generate(schema: unknown, docsText: string): Map<string, string>;
}

describe('generated protocol files', () => {
  it('are what the schema generates (run npm run generate -w @tidewire/protocol)', () => {
    execFileSync(process.execPath, [generator, '--out', out], { stdio: 'pipe' });
    const generated = files(out).map((f) => relative(out, f));
    expect(generated).toContain('packages/protocol/src/messages.ts');
    expect(generated).toContain('packages/protocol/rust/src/codes.rs');
    expect(generated).toContain('docs/protocol.md');
    const stale = generated.filter((path) => readFileSync(join(out, path), 'utf8') !== readFileSync(join(root, path), 'utf8'));
    expect(stale, 'generated files differ from the schema: run npm run generate -w @tidewire/protocol').toEqual([]);
  });

  it('carry a header naming the schema and the command', () => {
    for (const path of ['packages/protocol/src/messages.ts', 'packages/protocol/src/codes.ts', 'packages/protocol/src/limits.ts', 'packages/protocol/rust/src/lib.rs']) {
      const head = readFileSync(join(root, path), 'utf8').split('\n', 2).join('\n');
      expect(head, path).toContain('Generated from packages/protocol/schema/protocol.json');
      expect(head, path).toContain('npm run generate -w @tidewire/protocol');
    }
  });

  it('are refused for a schema that breaks a rule, naming the entry', async () => {
    const { generate } = (await import(generator)) as Generator;
    const schema = JSON.parse(readFileSync(join(root, 'packages/protocol/schema/protocol.json'), 'utf8')) as {
      messages: { name: string; type: string | string[]; fields: { name: string; type?: string }[] }[];
    };
    const docs = readFileSync(join(root, 'docs/protocol.md'), 'utf8');
    expect(generate(schema, docs).size).toBeGreaterThan(5);

    const unknownType = structuredClone(schema);
    unknownType.messages[0]!.fields.push({ name: 'extra', type: 'NoSuchType' });
    expect(() => generate(unknownType, docs)).toThrow(/messages\.SessionLogin\.fields\[\d+\] \(extra\) has type 'NoSuchType'/);

    const twice = structuredClone(schema);
    twice.messages[1]!.type = twice.messages[0]!.type;
    expect(() => generate(twice, docs)).toThrow(/repeats the message type 'session\.login'/);

    expect(() => generate(schema, docs.replace('<!-- generated:messages -->', ''))).toThrow(/markers <!-- generated:messages -->/);
  });
});
