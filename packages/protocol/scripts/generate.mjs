#!/usr/bin/env node
// Generates every hand-maintained copy of the wire protocol from one schema,
// packages/protocol/schema/protocol.json:
//   packages/protocol/src/messages.ts, codes.ts, limits.ts    (TypeScript types and constants)
//   packages/protocol/rust/src/*.rs                           (the `tidewire-protocol` crate)
//   docs/protocol.md, the sections between `<!-- generated:NAME -->` markers
//
//   node packages/protocol/scripts/generate.mjs            write the files (only those that changed)
//   node packages/protocol/scripts/generate.mjs --check    write nothing; exit 1 naming stale files
//   node packages/protocol/scripts/generate.mjs --out DIR  write the files under DIR instead
//
// Plain Node, no dependencies: `npm run build` runs it before tsc.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const SCHEMA = 'packages/protocol/schema/protocol.json';
const DOCS = 'docs/protocol.md';
const COMMAND = 'npm run generate -w @tidewire/protocol';
const FROM = `Generated from ${SCHEMA} by packages/protocol/scripts/generate.mjs.`;
const DO_NOT_EDIT = `Do not edit: edit the schema and run \`${COMMAND}\`.`;

// ------------------------------------------------------------------------------------------------
// Schema checks: a bad schema stops the generator with the path of the offending entry.

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean']);
const DIRECTIONS = new Set(['client->server', 'server->client']);
const ENDPOINTS = new Set(['stream', 'source']);
const RUST_TYPES = new Set(['usize', 'u32', 'u64', 'f64']);

function fail(path, rule) {
  throw new Error(`${SCHEMA}: ${path} ${rule}`);
}

function checkFields(path, fields, named) {
  const seen = new Set();
  fields.forEach((f, i) => {
    const at = `${path}.fields[${i}] (${f.name})`;
    if (typeof f.name !== 'string' || !/^[a-z][A-Za-z0-9]*$/.test(f.name)) fail(at, 'needs a camelCase `name`');
    if (seen.has(f.name)) fail(at, 'repeats a key');
    seen.add(f.name);
    const shapes = ['type', 'enum', 'fields'].filter((k) => f[k] !== undefined);
    if (shapes.length !== 1) fail(at, 'needs exactly one of `type`, `enum`, `fields`');
    if (f.type !== undefined) {
      const base = f.type.replace(/(\[\])+$/, '');
      if (!PRIMITIVES.has(base) && !named.has(base)) fail(at, `has type '${f.type}': not a primitive or a type of the schema`);
    }
    if (f.enum !== undefined && (!Array.isArray(f.enum) || f.enum.length === 0)) fail(at, 'needs a non-empty `enum`');
    if (f.fields !== undefined) checkFields(at, f.fields, named);
  });
}

function check(schema) {
  const families = new Set(schema.families.map((f) => f.name));
  const named = new Set(['ErrorCode']);
  for (const t of schema.types) {
    if (named.has(t.name)) fail(`types.${t.name}`, 'is defined twice');
    named.add(t.name);
  }
  for (const t of schema.types) {
    if (!families.has(t.family)) fail(`types.${t.name}`, `names unknown family '${t.family}'`);
    if (t.kind === 'object') checkFields(`types.${t.name}`, t.fields, named);
    else if (t.kind === 'variants') t.variants.forEach((v) => checkFields(`types.${t.name}.${v.tag}`, v.fields, named));
    else if (t.kind === 'map' && !named.has(t.values) && t.values !== 'string') fail(`types.${t.name}`, `maps to unknown type '${t.values}'`);
    else if (t.kind === 'union') t.of.forEach((x) => x === 'null' || PRIMITIVES.has(x) || named.has(x) || fail(`types.${t.name}`, `has unknown member '${x}'`));
    else if (t.kind === 'enum' && new Set(t.values.map((v) => v.value)).size !== t.values.length) fail(`types.${t.name}`, 'repeats a value');
    else if (!['object', 'variants', 'map', 'union', 'enum'].includes(t.kind)) fail(`types.${t.name}`, `has unknown kind '${t.kind}'`);
  }
  const types = new Set();
  for (const m of schema.messages) {
    const at = `messages.${m.name}`;
    if (named.has(m.name)) fail(at, 'reuses the name of a type');
    named.add(m.name);
    for (const t of typesOf(m)) {
      if (!/^[a-z]+(\.[a-z][A-Za-z]*)?$/.test(t)) fail(at, `has type '${t}': names are entity.verb`);
      if (types.has(t)) fail(at, `repeats the message type '${t}'`);
      types.add(t);
    }
    if (!families.has(m.family)) fail(at, `names unknown family '${m.family}'`);
    if (!DIRECTIONS.has(m.direction)) fail(at, `has direction '${m.direction}': client->server or server->client`);
    if (!m.endpoints.length || m.endpoints.some((e) => !ENDPOINTS.has(e))) fail(at, 'needs endpoints among stream, source');
    if (m.fields.some((f) => f.name === 'type')) fail(at, 'lists `type`: it is implicit (always the first key)');
  }
  for (const m of schema.messages) checkFields(`messages.${m.name}`, m.fields, named);
  for (const c of schema.errorCodes) if (!/^[A-Z][A-Z_]*$/.test(c.name) || typeof c.retryable !== 'boolean') fail(`errorCodes.${c.name}`, 'needs a SCREAMING_SNAKE name and boolean `retryable`');
  for (const c of schema.closeCodes) if (!Number.isInteger(c.code) || typeof c.reconnect !== 'boolean') fail(`closeCodes.${c.name}`, 'needs an integer `code` and boolean `reconnect`');
  const limits = [...schema.limits, ...schema.limitGroups.flatMap((g) => g.limits)];
  for (const l of limits) {
    if (typeof l.value === 'number' && !RUST_TYPES.has(l.rust)) fail(`limits.${l.name}`, `needs \`rust\`: one of ${[...RUST_TYPES].join(', ')}`);
    if (typeof l.value === 'number' && l.rust !== 'f64' && !Number.isSafeInteger(l.value)) fail(`limits.${l.name}`, 'is not an integer');
    if (typeof l.value !== 'number' && typeof l.value !== 'string') fail(`limits.${l.name}`, 'needs a number or string `value`');
    if (!l.unit || !l.doc) fail(`limits.${l.name}`, 'needs `unit` and `doc`');
  }
  const limitNames = new Set(schema.limits.map((l) => l.name));
  const { subject, fieldName, clientOrderId } = schema.syntax;
  for (const [name, ref] of [['subject', subject.maxBytes], ['fieldName', fieldName.maxBytes], ['clientOrderId', clientOrderId.maxChars]]) {
    if (!limitNames.has(ref)) fail(`syntax.${name}`, `names unknown limit '${ref}'`);
  }
}

// ------------------------------------------------------------------------------------------------
// Helpers

/** The `type` values of a message (one interface may carry two, e.g. admin.subscribe/unsubscribe). */
function typesOf(m) {
  return Array.isArray(m.type) ? m.type : [m.type];
}

const camelToScreaming = (s) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/\./g, '_').toUpperCase();
const pascalToSnake = (s) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
const screamingToPascal = (s) => s.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c) => c.toUpperCase());

/** `1234567` -> `1_234_567` (integers of 5 digits or more; other numbers as JavaScript prints them). */
function numberLiteral(v) {
  if (!Number.isInteger(v) || Math.abs(v) < 10_000) return String(v);
  return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, '_');
}

function limitValue(v) {
  return typeof v === 'string' ? `'${v}'` : numberLiteral(v);
}

function rustLimitValue(l) {
  if (typeof l.value === 'string') return JSON.stringify(l.value);
  const n = numberLiteral(l.value);
  return l.rust === 'f64' && Number.isInteger(l.value) ? `${n}.0` : n;
}

/** A JSDoc comment at `indent`: one line when the doc is one line, else a block. */
function jsdoc(doc, indent = '') {
  if (!doc) return '';
  const lines = doc.split('\n');
  if (lines.length === 1) return `${indent}/** ${doc} */\n`;
  return `${indent}/**\n${lines.map((l) => (l ? `${indent} * ${l}` : `${indent} *`)).join('\n')}\n${indent} */\n`;
}

/** A Rust doc comment (`///` or `//!`) at `indent`. */
function rustdoc(doc, indent = '', mark = '///') {
  if (!doc) return '';
  return doc.split('\n').map((l) => (l ? `${indent}${mark} ${l}` : `${indent}${mark}`)).join('\n') + '\n';
}

/** `a | b | c` on one line, or one member per line when too long. */
function unionText(head, members, width = 160) {
  const one = `${head} ${members.join(' | ')};`;
  if (one.length <= width) return `${one}\n`;
  return `${head}\n${members.map((m) => `  | ${m}`).join('\n')};\n`;
}

function constArray(name, values, doc) {
  const quoted = values.map((v) => `'${v}'`);
  const one = `export const ${name} = [${quoted.join(', ')}] as const;`;
  const body = one.length <= 160 ? one : `export const ${name} = [\n${quoted.map((q) => `  ${q},`).join('\n')}\n] as const;`;
  return `${jsdoc(doc)}${body}\n`;
}

// ------------------------------------------------------------------------------------------------
// TypeScript

function tsType(f, indent) {
  let t;
  if (f.enum) t = f.enum.map((v) => `'${v}'`).join(' | ');
  else if (f.fields) t = tsInlineObject(f.fields, indent);
  else t = f.type.replace(/^integer/, 'number');
  return f.nullable ? `${t} | null` : t;
}

function tsInlineObject(fields, indent) {
  if (fields.every((f) => !f.doc)) return `{ ${fields.map((f) => `${f.name}${f.optional ? '?' : ''}: ${tsType(f, indent)}`).join('; ')} }`;
  return `{\n${tsMembers(fields, `${indent}  `)}${indent}}`;
}

function tsMembers(fields, indent) {
  return fields.map((f) => `${jsdoc(f.doc, indent)}${indent}${f.name}${f.optional ? '?' : ''}: ${tsType(f, indent)};\n`).join('');
}

function tsTypeDef(t) {
  const head = jsdoc(t.doc);
  switch (t.kind) {
    case 'object':
      return `${head}export interface ${t.name} {\n${tsMembers(t.fields, '  ')}}\n`;
    case 'union':
      return `${head}${unionText(`export type ${t.name} =`, t.of)}`;
    case 'map':
      return `${head}export type ${t.name} = Record<string, ${t.values}>;\n`;
    case 'enum': {
      let text;
      if (t.values.some((v) => v.doc)) {
        text = `${head}export type ${t.name} =\n${t.values.map((v) => `${jsdoc(v.doc, '  ')}  | '${v.value}'`).join('\n')};\n`;
      } else {
        text = `${head}${unionText(`export type ${t.name} =`, t.values.map((v) => `'${v.value}'`))}`;
      }
      if (t.codes) {
        const entries = t.values.map((v) => `  ${v.value}: ${v.code},`).join('\n');
        text += `\n${jsdoc(t.codes.doc)}export const ${t.codes.name}: Readonly<Record<${t.name}, number>> = {\n${entries}\n};\n`;
      }
      return text;
    }
    case 'variants': {
      const variant = (v) => {
        const fields = [`${t.tag}: '${v.tag}'`, ...v.fields.map((f) => `${f.name}${f.optional ? '?' : ''}: ${tsType(f, '  ')}`)];
        return `${jsdoc(v.doc, '  ')}  | { ${fields.join('; ')} }`;
      };
      return `${head}export type ${t.name} =\n${t.variants.map(variant).join('\n')};\n`;
    }
  }
  throw new Error(`unknown kind ${t.kind}`);
}

function tsMessage(m) {
  const type = typesOf(m).map((t) => `'${t}'`).join(' | ');
  return `${jsdoc(m.doc)}export interface ${m.name} {\n  type: ${type};\n${tsMembers(m.fields, '  ')}}\n`;
}

/** The sets of messages the unions and type lists are made of. */
function messageSets(schema) {
  const ms = schema.messages;
  const toServer = (endpoint) => ms.filter((m) => m.direction === 'client->server' && m.endpoints.includes(endpoint));
  return {
    client: toServer('stream'),
    source: toServer('source'),
    server: ms.filter((m) => m.direction === 'server->client' && m.endpoints.includes('stream')),
    flow: ms.filter((m) => m.direction === 'server->client' && !m.endpoints.includes('stream')),
    allServer: ms.filter((m) => m.direction === 'server->client'),
  };
}

/** Union members: a family with its own unions appears as that union, once. */
function collapse(schema, ms, side) {
  const out = [];
  for (const m of ms) {
    const u = schema.families.find((f) => f.name === m.family)?.unions;
    const name = u ? `${u.prefix}${side}Message` : m.name;
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

function messagesTs(schema) {
  const sets = messageSets(schema);
  let out = `// ${FROM}\n// ${DO_NOT_EDIT}\n\n${jsdoc(schema.doc)}\nimport type { ErrorCode } from './codes.js';\n`;
  for (const fam of schema.families) {
    out += `\n// ${'-'.repeat(93)}\n// ${fam.title}${fam.doc ? `\n// ${fam.doc}` : ''}\n`;
    for (const t of schema.types.filter((x) => x.family === fam.name)) out += `\n${tsTypeDef(t)}`;
    const ms = schema.messages.filter((m) => m.family === fam.name);
    for (const m of ms) out += `\n${tsMessage(m)}`;
    if (fam.unions) {
      const u = fam.unions;
      const clientMs = ms.filter((m) => sets.client.includes(m));
      const serverMs = ms.filter((m) => sets.server.includes(m));
      out += `\n${jsdoc(u.client)}${unionText(`export type ${u.prefix}ClientMessage =`, clientMs.map((m) => m.name))}`;
      out += `${jsdoc(u.server)}${unionText(`export type ${u.prefix}ServerMessage =`, serverMs.map((m) => m.name))}`;
      out += `\n${constArray(`${u.prefix.toUpperCase()}_CLIENT_MESSAGE_TYPES`, clientMs.flatMap(typesOf), u.clientTypes)}`;
      out += constArray(`${u.prefix.toUpperCase()}_SERVER_MESSAGE_TYPES`, serverMs.flatMap(typesOf), u.serverTypes);
    }
  }
  const d = schema.unions;
  out += `\n// ${'-'.repeat(93)}\n// Every message of an endpoint and direction\n\n`;
  out += `${jsdoc(d.ClientMessage)}${unionText('export type ClientMessage =', collapse(schema, sets.client, 'Client'))}\n`;
  out += `${jsdoc(d.SourceMessage)}${unionText('export type SourceMessage =', sets.source.map((m) => m.name))}\n`;
  out += `${jsdoc(d.ServerMessage)}${unionText('export type ServerMessage =', collapse(schema, sets.server, 'Server'), 100)}\n`;
  out += `${jsdoc(d.SourceFlowMessage)}${unionText('export type SourceFlowMessage =', sets.flow.map((m) => m.name))}\n`;
  out += `${jsdoc(d.SourceServerMessage)}export type SourceServerMessage = ServerMessage | SourceFlowMessage;\n\n`;
  out += constArray('CLIENT_MESSAGE_TYPES', sets.client.flatMap(typesOf), d.CLIENT_MESSAGE_TYPES);
  out += constArray('SOURCE_MESSAGE_TYPES', sets.source.flatMap(typesOf), d.SOURCE_MESSAGE_TYPES);
  out += constArray('SERVER_MESSAGE_TYPES', sets.allServer.flatMap(typesOf), d.SERVER_MESSAGE_TYPES);
  return out;
}

function codesTs(schema) {
  const errors = schema.errorCodes.map((c) => `${jsdoc(c.doc, '  ')}  ${c.name}: { retryable: ${c.retryable} },\n`).join('');
  const closes = schema.closeCodes.map((c) => `${jsdoc(c.doc, '  ')}  ${c.name}: { code: ${c.code}, reconnect: ${c.reconnect} },\n`).join('');
  return `// ${FROM}
// ${DO_NOT_EDIT}

/**
 * Error codes carried by \`error\` frames, and WebSocket close codes.
 * \`code\` is stable and machine-readable; \`retryable\` says whether sending the same
 * request again (later, unchanged) can succeed. Documented in docs/protocol.md.
 */

export const ErrorCodes = {
${errors}} as const;

/** One of the stable error codes. */
export type ErrorCode = keyof typeof ErrorCodes;

/** Every error code, in documentation order. */
export const ERROR_CODES = Object.keys(ErrorCodes) as ErrorCode[];

/** True when \`value\` is one of the protocol's error codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ErrorCodes, value);
}

/**
 * WebSocket close codes the server uses. 1000-1015 are RFC 6455; 4000-4999 are ours.
 * A client reconnects after every code except those with \`reconnect: false\`.
 */
export const CloseCodes = {
${closes}} as const;

/** Name of a close code. */
export type CloseCodeName = keyof typeof CloseCodes;
`;
}

function limitsTs(schema) {
  const { subject, fieldName, clientOrderId } = schema.syntax;
  const maxChars = schema.limits.find((l) => l.name === clientOrderId.maxChars).value;
  const scalar = (l) => `${jsdoc(l.doc)}export const ${l.name} = ${limitValue(l.value)};\n`;
  const group = (g) => `${jsdoc(g.doc)}export const ${g.name} = {\n${g.limits.map((l) => `${jsdoc(l.doc, '  ')}  ${l.name}: ${limitValue(l.value)},\n`).join('')}} as const;\n`;
  return `// ${FROM}
// ${DO_NOT_EDIT}

/**
 * Protocol limits: hard rules of the wire format (violations are BAD_REQUEST), and
 * defaults of configurable limits (violations are LIMIT_EXCEEDED; the server's config
 * may lower or raise them). Documented in docs/protocol.md.
 */

${schema.limits.map(scalar).join('')}
${jsdoc(subject.doc)}export const SUBJECT_PATTERN = /^\\/[${subject.segmentChars}]+(?:\\/[${subject.segmentChars}]+)*$/;
${jsdoc(fieldName.doc)}export const FIELD_NAME_PATTERN = /^[${fieldName.firstChars}][${fieldName.chars}]*$/;
${jsdoc(clientOrderId.doc)}export const CLIENT_ORDER_ID_PATTERN = /^[${clientOrderId.chars}]{1,${maxChars}}$/;

${schema.limitGroups.map(group).join('\n')}`;
}

// ------------------------------------------------------------------------------------------------
// Rust: the `tidewire-protocol` crate (no dependencies)

const RUST_HEADER = `// ${FROM}\n// ${DO_NOT_EDIT}\n`;

/**
 * `&[...]` of Rust expressions laid out as rustfmt (max_width 120, small heuristics "Max") does:
 * one line when it fits, else the slice on the next line, else one item per line.
 */
function rustSlice(head, items, indent, width = 120) {
  const slice = `&[${items.join(', ')}];`;
  if (indent.length + head.length + slice.length <= width) return `${indent}${head}${slice}\n`;
  if (indent.length + 4 + slice.length <= width) return `${indent}${head.trimEnd()}\n${indent}    ${slice}\n`;
  return `${indent}${head}&[\n${items.map((x) => `${indent}    ${x},\n`).join('')}${indent}];\n`;
}

/** `matches!(self, A | B)` as rustfmt lays it out inside a method body. */
function rustMatches(items) {
  const one = `        matches!(self, ${items.join(' | ')})`;
  if (one.length <= 120) return one;
  return `        matches!(\n            self,\n            ${items.join(' | ')}\n        )`;
}

/** A byte pattern for `matches!` from a regex character class such as `A-Za-z0-9_.@:-`. */
function bytePattern(chars) {
  const parts = [];
  for (let i = 0; i < chars.length; i++) {
    if (chars[i + 1] === '-' && i + 2 < chars.length) {
      parts.push(`b'${chars[i]}'..=b'${chars[i + 2]}'`);
      i += 2;
    } else parts.push(`b'${chars[i]}'`);
  }
  return parts.join(' | ');
}

function libRs() {
  return `${RUST_HEADER}
//! The Tidewire wire protocol's codes, limits, message kinds, key names and syntax rules, generated
//! from packages/protocol/schema/protocol.json (the one definition; the TypeScript package
//! \`@tidewire/protocol\` is generated from the same file). No dependencies.

pub mod codes;
pub mod limits;
pub mod messages;
pub mod syntax;

pub use codes::{CloseCode, ErrorCode};
`;
}

function codesRs(schema) {
  const e = schema.errorCodes;
  const variants = e.map((c) => `${rustdoc(c.doc, '    ')}    ${screamingToPascal(c.name)},\n`).join('');
  const asStr = e.map((c) => `            ErrorCode::${screamingToPascal(c.name)} => "${c.name}",\n`).join('');
  const parse = e.map((c) => `            "${c.name}" => Some(ErrorCode::${screamingToPascal(c.name)}),\n`).join('');
  const retryable = e.filter((c) => c.retryable).map((c) => `ErrorCode::${screamingToPascal(c.name)}`);
  const all = e.map((c) => `ErrorCode::${screamingToPascal(c.name)}`);
  const k = schema.closeCodes;
  const closeVariants = k.map((c) => `${rustdoc(c.doc, '    ')}    ${screamingToPascal(c.name)},\n`).join('');
  const closeNum = k.map((c) => `            CloseCode::${screamingToPascal(c.name)} => ${c.code},\n`).join('');
  const closeName = k.map((c) => `            CloseCode::${screamingToPascal(c.name)} => "${c.name}",\n`).join('');
  const reconnect = k.filter((c) => c.reconnect).map((c) => `CloseCode::${screamingToPascal(c.name)}`);
  const closeAll = k.map((c) => `CloseCode::${screamingToPascal(c.name)}`);
  return `${RUST_HEADER}
//! Error codes of \`error\` frames and WebSocket close codes.

/// A stable error code of \`error\` frames; \`as_str\` is its wire spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
${variants}}

impl ErrorCode {
    /// Every code, in documentation order.
${rustSlice('pub const ALL: &[ErrorCode] = ', all, '    ').trimEnd()}

    /// The wire spelling, e.g. \`"BAD_REQUEST"\`.
    pub fn as_str(self) -> &'static str {
        match self {
${asStr}        }
    }

    /// Whether sending the same request again (later, unchanged) can succeed.
    pub fn retryable(self) -> bool {
${rustMatches(retryable)}
    }

    /// The code spelled \`s\` on the wire, if any.
    pub fn parse(s: &str) -> Option<ErrorCode> {
        match s {
${parse}            _ => None,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A WebSocket close code the server uses (1000-1015: RFC 6455; 4000-4999: Tidewire's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseCode {
${closeVariants}}

impl CloseCode {
    /// Every close code, in documentation order.
${rustSlice('pub const ALL: &[CloseCode] = ', closeAll, '    ').trimEnd()}

    /// The numeric code sent in the close frame.
    pub fn code(self) -> u16 {
        match self {
${closeNum}        }
    }

    /// The name, e.g. \`"SLOW_CONSUMER"\`.
    pub fn name(self) -> &'static str {
        match self {
${closeName}        }
    }

    /// Whether a client reconnects after it.
    pub fn reconnect(self) -> bool {
${rustMatches(reconnect)}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_code_parses_back_from_its_wire_spelling() {
        for &code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            assert_eq!(code.to_string(), code.as_str());
        }
        assert_eq!(ErrorCode::parse("bad_request"), None);
        assert_eq!(ErrorCode::ALL.len(), ${e.length});
        assert_eq!(ErrorCode::ALL.iter().filter(|c| c.retryable()).count(), ${retryable.length});
    }

    #[test]
    fn close_codes_are_distinct() {
        let mut codes: Vec<u16> = CloseCode::ALL.iter().map(|c| c.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ${k.length});
        assert_eq!(CloseCode::ALL.iter().filter(|c| c.reconnect()).count(), ${reconnect.length});
    }
}
`;
}

function rustConst(l, name, indent) {
  const type = typeof l.value === 'string' ? '&str' : l.rust;
  return `${rustdoc(`${l.doc} Unit: ${l.unit}.`, indent)}${indent}pub const ${name}: ${type} = ${rustLimitValue(l)};\n`;
}

function limitsRs(schema) {
  const scalars = schema.limits.map((l) => rustConst(l, l.name, '')).join('\n');
  const groups = schema.limitGroups
    .map((g) => {
      const consts = g.limits.map((l) => rustConst(l, camelToScreaming(l.name), '    ')).join('\n');
      return `/// \`${g.name}\`: ${g.doc.replace(/\n/g, '\n/// ')}\npub mod ${g.name.toLowerCase()} {\n${consts}}\n`;
    })
    .join('\n');
  return `${RUST_HEADER}
//! Protocol limits: hard rules of the wire format (violations are \`BAD_REQUEST\`), and defaults of
//! configurable limits (violations are \`LIMIT_EXCEEDED\`; the server's config may change them).

${scalars}
${groups}`;
}

/** Every key name of every message and nested object type, in first-seen order. */
function allKeys(schema) {
  const keys = new Map([['type', 'The message kind: `entity.verb`.']]);
  const visit = (fields) => {
    for (const f of fields) {
      if (!keys.has(f.name)) keys.set(f.name, undefined);
      if (f.fields) visit(f.fields);
    }
  };
  for (const m of schema.messages) visit(m.fields);
  for (const t of schema.types) {
    if (t.kind === 'object') visit(t.fields);
    if (t.kind === 'variants') {
      keys.set(t.tag, keys.get(t.tag));
      t.variants.forEach((v) => visit(v.fields));
    }
  }
  return [...keys.keys()];
}

function messagesRs(schema) {
  const kinds = schema.messages.flatMap((m) =>
    typesOf(m).map((t) => {
      const where = m.endpoints.map((e) => `/${e}`).join(', ');
      return `${rustdoc(`\`${t}\` (\`${m.name}\`, ${m.direction} on ${where}).`, '    ')}    pub const ${camelToScreaming(t)}: &str = "${t}";\n`;
    }),
  );
  const kindNames = schema.messages.flatMap((m) => typesOf(m).map(camelToScreaming));
  const keys = allKeys(schema);
  const keyConsts = keys.map((k) => `    /// \`${k}\`.\n    pub const ${camelToScreaming(k)}: &str = "${k}";\n`).join('');
  const perMessage = schema.messages
    .map((m) => {
      const all = ['type', ...m.fields.map((f) => f.name)].map((k) => `key::${camelToScreaming(k)}`);
      const required = ['type', ...m.fields.filter((f) => !f.optional).map((f) => f.name)].map((k) => `key::${camelToScreaming(k)}`);
      const types = typesOf(m).map((t) => `kind::${camelToScreaming(t)}`);
      return `/// \`${m.name}\`: ${typesOf(m).map((t) => `\`${t}\``).join(', ')}.
pub mod ${pascalToSnake(m.name)} {
    use super::{key, kind};

    /// Its \`type\` values.
${rustSlice('pub const TYPES: &[&str] = ', types, '    ')}    /// Every key, in canonical (wire) order.
${rustSlice('pub const KEYS: &[&str] = ', all, '    ')}    /// The keys it always carries.
${rustSlice('pub const REQUIRED: &[&str] = ', required, '    ')}}
`;
    })
    .join('\n');
  const enums = schema.types
    .filter((t) => t.kind === 'enum')
    .map((t) => {
      const consts = t.values
        .map((v) => `${rustdoc(v.doc ? `\`${v.value}\`: ${v.doc}` : `\`${v.value}\`.`, '    ')}    pub const ${camelToScreaming(v.value)}: &str = "${v.value}";\n`)
        .join('');
      const all = t.values.map((v) => camelToScreaming(v.value));
      return `/// \`${t.name}\`: ${t.doc.replace(/\n/g, '\n/// ')}
pub mod ${pascalToSnake(t.name)} {
${consts}
    /// Every value, in schema order.
${rustSlice('pub const ALL: &[&str] = ', all, '    ')}}
`;
    })
    .join('\n');
  return `${RUST_HEADER}
//! Message kinds (\`type\`), key names, the keys of every message and the value sets of enumerated
//! keys.

/// Every message \`type\`.
pub mod kind {
${kinds.join('')}
    /// Every message type, in schema order.
${rustSlice('pub const ALL: &[&str] = ', kindNames, '    ')}}

/// Every key name of every message and nested object.
pub mod key {
${keyConsts}}

${perMessage}
${enums}`;
}

function syntaxRs(schema) {
  const { subject, fieldName, clientOrderId } = schema.syntax;
  const subjectMax = subject.maxBytes;
  const fieldMax = fieldName.maxBytes;
  const idMax = clientOrderId.maxChars;
  return `${RUST_HEADER}
//! Syntax rules of subjects, field names and client order ids (the TypeScript \`SUBJECT_PATTERN\`,
//! \`FIELD_NAME_PATTERN\`, \`CLIENT_ORDER_ID_PATTERN\`), as byte predicates.

use crate::limits::{${[clientOrderId.maxChars, fieldName.maxBytes, subject.maxBytes].sort().join(', ')}};

/// \`SUBJECT_PATTERN\`: ${subject.doc}
pub const SUBJECT_PATTERN: &str = "^/[${subject.segmentChars}]+(?:/[${subject.segmentChars}]+)*$";
/// \`FIELD_NAME_PATTERN\`: ${fieldName.doc}
pub const FIELD_NAME_PATTERN: &str = "^[${fieldName.firstChars}][${fieldName.chars}]*$";
/// \`CLIENT_ORDER_ID_PATTERN\`: ${clientOrderId.doc}
pub const CLIENT_ORDER_ID_PATTERN: &str = "^[${clientOrderId.chars}]{1,${schema.limits.find((l) => l.name === idMax).value}}$";

/// A byte of a subject segment: \`[${subject.segmentChars}]\`.
#[inline]
pub fn is_subject_segment_byte(b: u8) -> bool {
    matches!(b, ${bytePattern(subject.segmentChars)})
}

/// The first byte of a field name: \`[${fieldName.firstChars}]\`.
#[inline]
pub fn is_field_name_start_byte(b: u8) -> bool {
    matches!(b, ${bytePattern(fieldName.firstChars)})
}

/// A byte of a field name after the first: \`[${fieldName.chars}]\`.
#[inline]
pub fn is_field_name_byte(b: u8) -> bool {
    matches!(b, ${bytePattern(fieldName.chars)})
}

/// A byte of a client order id: \`[${clientOrderId.chars}]\`.
#[inline]
pub fn is_client_order_id_byte(b: u8) -> bool {
    matches!(b, ${bytePattern(clientOrderId.chars)})
}

/// \`SUBJECT_PATTERN\` and \`${subjectMax}\`: '/' then non-empty segments separated by single '/', no
/// trailing '/'.
pub fn is_subject(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 2 || b.len() > ${subjectMax} || b[0] != b'/' || b[b.len() - 1] == b'/' {
        return false;
    }
    let mut prev_slash = true;
    for &c in &b[1..] {
        if c == b'/' {
            if prev_slash {
                return false;
            }
            prev_slash = true;
        } else if is_subject_segment_byte(c) {
            prev_slash = false;
        } else {
            return false;
        }
    }
    true
}

/// \`FIELD_NAME_PATTERN\` and \`${fieldMax}\`.
pub fn is_field_name(s: &str) -> bool {
    let b = s.as_bytes();
    let Some((&first, rest)) = b.split_first() else {
        return false;
    };
    b.len() <= ${fieldMax} && is_field_name_start_byte(first) && rest.iter().all(|&c| is_field_name_byte(c))
}

/// \`CLIENT_ORDER_ID_PATTERN\`: 1..=\`${idMax}\` bytes, each a client order id byte.
pub fn is_client_order_id(s: &str) -> bool {
    (1..=${idMax}).contains(&s.len()) && s.bytes().all(is_client_order_id_byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects() {
        for s in ["/A", "/a/b", "/x@T1", "/_.:-/9"] {
            assert!(is_subject(s), "{s}");
        }
        for s in ["", "/", "//", "/a/", "a", "/a b", "/a//b", "/a\\u{e9}"] {
            assert!(!is_subject(s), "{s}");
        }
        assert!(is_subject(&format!("/{}", "a".repeat(${subjectMax} - 1))));
        assert!(!is_subject(&format!("/{}", "a".repeat(${subjectMax}))));
    }

    #[test]
    fn field_names() {
        for s in ["bid", "_x1", "A"] {
            assert!(is_field_name(s), "{s}");
        }
        for s in ["", "1x", "a-b", "a b", "\\u{e9}"] {
            assert!(!is_field_name(s), "{s}");
        }
        assert!(is_field_name(&"a".repeat(${fieldMax})));
        assert!(!is_field_name(&"a".repeat(${fieldMax} + 1)));
    }

    #[test]
    fn client_order_ids() {
        assert!(is_client_order_id("a.b_c:d-e") && is_client_order_id(&"z".repeat(${idMax})));
        assert!(!is_client_order_id("") && !is_client_order_id(&"z".repeat(${idMax} + 1)));
        assert!(!is_client_order_id("a/b") && !is_client_order_id("a@b"));
    }
}
`;
}

// ------------------------------------------------------------------------------------------------
// docs/protocol.md sections

const cell = (text) => (text ?? '').replace(/\n+/g, ' ').replace(/\|/g, '\\|');
const anchor = (name) => `#${name.toLowerCase()}`;

function docType(f, named) {
  let t;
  if (f.enum) t = f.enum.map((v) => `\`"${v}"\``).join(' \\| ');
  else if (f.fields) t = `object: ${f.fields.map((x) => `\`${x.name}${x.optional ? '?' : ''}\``).join(', ')}`;
  else {
    const base = f.type.replace(/(\[\])+$/, '');
    const suffix = f.type.slice(base.length);
    const shown = named.has(base) ? `[\`${base}\`](${anchor(base)})` : base;
    t = suffix ? `${shown} array` : shown;
  }
  return f.nullable ? `${t} or null` : t;
}

function keyRows(fields, named, prefix = '') {
  return fields.flatMap((f) => [
    `| | \`${prefix}${f.name}\` | ${docType(f, named)} | ${f.optional ? 'no' : 'yes'} | ${cell(f.doc)} |`,
    ...(f.fields ? keyRows(f.fields, named, `${prefix}${f.name}.`) : []),
  ]);
}

function messagesMd(schema) {
  const named = new Set(schema.types.map((t) => t.name));
  const lines = [];
  for (const fam of schema.families) {
    const ms = schema.messages.filter((m) => m.family === fam.name);
    if (!ms.length) continue;
    lines.push(`### ${fam.title}`, '', '| message | key | type | required | meaning |', '|---|---|---|---|---|');
    for (const m of ms) {
      const where = m.endpoints.map((e) => `\`/${e}\``).join(', ');
      const dir = m.direction === 'client->server' ? (m.endpoints.includes('stream') ? 'client' : 'source') + (m.endpoints.length > 1 ? '/source' : '') + ' -> server' : 'server -> ' + m.endpoints.map((e) => (e === 'stream' ? 'client' : 'source')).join('/');
      const types = typesOf(m).map((t) => `\`${t}\``).join(' / ');
      lines.push(`| **${types}** (\`${m.name}\`) | \`type\` | ${typesOf(m).map((t) => `\`"${t}"\``).join(' \\| ')} | yes | ${dir} on ${where}. ${cell(m.doc)} |`);
      lines.push(...keyRows(m.fields, named));
    }
    lines.push('');
  }
  lines.push('### Nested types', '', '| type | key | type | required | meaning |', '|---|---|---|---|---|');
  for (const t of schema.types.filter((x) => x.kind === 'object')) {
    lines.push(`| <a id="${t.name.toLowerCase()}"></a>**\`${t.name}\`** | | | | ${cell(t.doc)} |`);
    lines.push(...keyRows(t.fields, named));
  }
  lines.push('', '| type | values | meaning |', '|---|---|---|');
  for (const t of schema.types.filter((x) => x.kind !== 'object')) {
    let values;
    if (t.kind === 'enum') values = t.values.map((v) => `\`"${v.value}"\`${v.doc ? `: ${cell(v.doc)}` : ''}${v.code !== undefined ? ` (code ${v.code})` : ''}`).join('<br>');
    else if (t.kind === 'union') values = t.of.join(' \\| ');
    else if (t.kind === 'map') values = `object: field name -> ${t.values}`;
    else values = t.variants.map((v) => `\`{"${t.tag}":"${v.tag}"${v.fields.map((f) => `,"${f.name}"`).join('')}}\`: ${cell(v.doc)}`).join('<br>');
    lines.push(`| <a id="${t.name.toLowerCase()}"></a>**\`${t.name}\`** | ${values} | ${cell(t.doc)} |`);
  }
  return lines.join('\n');
}

function errorCodesMd(schema) {
  return ['| code | retryable | meaning |', '|---|---|---|', ...schema.errorCodes.map((c) => `| \`${c.name}\` | ${c.retryable ? 'yes' : 'no'} | ${cell(c.doc)} |`)].join('\n');
}

function closeCodesMd(schema) {
  return ['| code | name | client reconnects | when |', '|---|---|---|---|', ...[...schema.closeCodes].sort((a, b) => a.code - b.code).map((c) => `| ${c.code} | \`${c.name}\` | ${c.reconnect ? 'yes' : 'no'} | ${cell(c.doc)} |`)].join('\n');
}

function limitsMd(schema) {
  const row = (name, l) => `| \`${name}\` | ${typeof l.value === 'string' ? `\`${l.value}\`` : l.value.toLocaleString('en-US')} | ${l.unit} | ${cell(l.doc)} |`;
  return [
    '| constant | value | unit | meaning |',
    '|---|---|---|---|',
    ...schema.limits.map((l) => row(l.name, l)),
    ...schema.limitGroups.flatMap((g) => g.limits.map((l) => row(`${g.name}.${l.name}`, l))),
  ].join('\n');
}

/** `text` with the section between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` replaced. */
function replaceSection(text, name, body) {
  const start = `<!-- generated:${name} -->`;
  const end = `<!-- /generated:${name} -->`;
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${DOCS}: markers ${start} ... ${end} not found`);
  const note = `<!-- ${FROM} ${DO_NOT_EDIT} -->`;
  return `${text.slice(0, a + start.length)}\n${note}\n\n${body}\n\n${text.slice(b)}`;
}

function protocolMd(schema, current) {
  let text = current;
  text = replaceSection(text, 'messages', messagesMd(schema));
  text = replaceSection(text, 'error-codes', errorCodesMd(schema));
  text = replaceSection(text, 'close-codes', closeCodesMd(schema));
  text = replaceSection(text, 'limits', limitsMd(schema));
  return text;
}

// ------------------------------------------------------------------------------------------------

/** Every generated file: repository-relative path -> content. */
export function generate(schema, docsText) {
  check(schema);
  return new Map([
    ['packages/protocol/src/messages.ts', messagesTs(schema)],
    ['packages/protocol/src/codes.ts', codesTs(schema)],
    ['packages/protocol/src/limits.ts', limitsTs(schema)],
    ['packages/protocol/rust/src/lib.rs', libRs()],
    ['packages/protocol/rust/src/codes.rs', codesRs(schema)],
    ['packages/protocol/rust/src/limits.rs', limitsRs(schema)],
    ['packages/protocol/rust/src/messages.rs', messagesRs(schema)],
    ['packages/protocol/rust/src/syntax.rs', syntaxRs(schema)],
    [DOCS, protocolMd(schema, docsText)],
  ]);
}

function main(args) {
  const outAt = args.indexOf('--out');
  const out = outAt >= 0 ? args[outAt + 1] : root;
  const checkOnly = args.includes('--check');
  const schema = JSON.parse(readFileSync(join(root, SCHEMA), 'utf8'));
  const files = generate(schema, readFileSync(join(root, DOCS), 'utf8'));
  const stale = [];
  for (const [path, content] of files) {
    const target = join(out, path);
    const before = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
    if (before === content) continue;
    stale.push(path);
    if (checkOnly) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  if (checkOnly && stale.length) {
    console.error(`generated files differ from ${SCHEMA}: ${stale.join(', ')}\nrun ${COMMAND}`);
    process.exit(1);
  }
  if (!checkOnly && stale.length) console.log(`[protocol] generated ${stale.join(', ')}`);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
