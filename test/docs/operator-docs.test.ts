/**
 * Docs that must say what the code does (issue 26): docs/operator.md's numbers for CRD
 * fields against the TypeBox schema, the names and metrics the CRD's descriptions mention
 * against what the operator produces, docs/operator.md's RBAC table against the chart's
 * roles, and the PostgreSQL table lists of README.md and docs/api.md against the
 * migrations. Every expectation is read from the docs and the code, none is written here.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { parseAllDocuments } from 'yaml';
import { RecognitionServiceSchema, RecognitionServiceSpecSchema } from '../../src/operator/api/schema.js';
import { desiredState } from '../../src/operator/desired/index.js';
import { signingSecret } from '../../src/operator/desired/api.js';
import { defaultMetrics } from '../../src/operator/desired/policies.js';
import { migrations } from '../../src/store/migrations/index.js';
import { sampleResource } from '../operator/fixtures.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** Markdown prose: fenced code blocks removed, whitespace (line breaks too) collapsed. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, ' ').replace(/\s+/g, ' ');
}

/** Rows of the first Markdown table whose header has these cells (matched case-insensitively). */
function tableRows(markdown: string, header: string[]): string[][] {
  const lines = markdown.split('\n');
  const cells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
  const start = lines.findIndex((l) => l.trim().startsWith('|') && header.every((h, i) => cells(l)[i]?.toLowerCase() === h.toLowerCase()));
  assert.ok(start >= 0, `a table with the header | ${header.join(' | ')} |`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.trim().startsWith('|')) break;
    rows.push(cells(line));
  }
  return rows;
}

// ------------------------------------------------------------ CRD fields and their numbers

interface Field {
  path: string;
  schema: Record<string, any>;
}

/** Every property under spec, by its dotted path (api.replicas.max). */
function specFields(): Field[] {
  const out: Field[] = [];
  const walk = (schema: Record<string, any>, prefix: string) => {
    for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, any>>)) {
      const p = prefix ? `${prefix}.${name}` : name;
      out.push({ path: p, schema: child });
      walk(child, p);
    }
    if (schema.items && typeof schema.items === 'object') walk(schema.items, prefix);
  };
  walk(RecognitionServiceSpecSchema, '');
  return out;
}

const isNumeric = (s: Record<string, any>) =>
  s.type === 'integer' || s.type === 'number' || typeof s.default === 'number' || (Array.isArray(s.anyOf) && s.anyOf.some((a: any) => a.type === 'integer'));

/** Seconds per unit the docs may give a number in. */
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, second: 1, seconds: 1, min: 60, minute: 60, minutes: 60, h: 3600, hour: 3600, hours: 3600, day: 86_400, days: 86_400 };
const UNIT = '(ms|s|seconds?|min|minutes?|h|hours?|days?)';

/** A number the doc gives in a unit, in the field's own unit (named by its suffix: fooSeconds, fooMs, fooDays). */
function inFieldUnit(value: number, unit: string | undefined, field: string): number {
  if (!unit) return value;
  const own = /Ms$/.test(field) ? 0.001 : /Seconds$/.test(field) ? 1 : /Minutes$/.test(field) ? 60 : /Days$/.test(field) ? 86_400 : undefined;
  return own === undefined ? value : (value * UNIT_SECONDS[unit]) / own;
}

interface Claim {
  token: string;
  kind: 'default' | 'minimum' | 'maximum';
  value: number;
  unit?: string;
  text: string;
}

/**
 * Numbers the prose ties to a field written in backticks: "`triton.gpus` (default 1)",
 * "`startupTimeoutSeconds`, 600 s by default", "`api.replicas.max > 1`, the default is 10",
 * "`x` (minimum 1, maximum 5)". What follows a field counts up to the next backtick, `)`,
 * `;` or the end of the sentence.
 */
function numericClaims(markdown: string): Claim[] {
  const text = prose(markdown);
  const claims: Claim[] = [];
  for (const m of text.matchAll(/`([^`]+)`([^`]*)/g)) {
    const token = /^[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*/.exec(m[1])?.[0];
    if (!token) continue;
    const after = m[2].split(/\)|;|\.\s|\|/)[0];
    const num = String.raw`(\d+(?:\.\d+)?)(?:\s*${UNIT})?(?![\w.%])`;
    const patterns: Array<[Claim['kind'], RegExp]> = [
      ['default', new RegExp(String.raw`\bdefaults?(?:\s+is|:)?\s+${num}`, 'g')],
      ['default', new RegExp(String.raw`${num}\s+by default`, 'g')],
      ['minimum', new RegExp(String.raw`\b(?:min|minimum|at least)\s+${num}`, 'g')],
      ['maximum', new RegExp(String.raw`\b(?:max|maximum|at most)\s+${num}`, 'g')],
    ];
    for (const [kind, re] of patterns) {
      for (const c of after.matchAll(re)) claims.push({ token, kind, value: Number(c[1]), unit: c[2], text: `\`${m[1]}\`${after}`.trim() });
    }
  }
  return claims;
}

test("every default, minimum and maximum docs/operator.md gives a CRD field is the schema's", () => {
  const fields = specFields();
  const resolve = (token: string) => {
    const p = token.replace(/^spec\./, '');
    return fields.filter((f) => f.path === p || f.path.endsWith(`.${p}`));
  };
  const checked = new Set<string>();
  const problems: string[] = [];
  for (const claim of numericClaims(read('docs/operator.md'))) {
    const matches = resolve(claim.token).filter((f) => isNumeric(f.schema));
    if (matches.length === 0) continue; // a flag, a chart value, a port name: not a CRD field
    if (matches.length > 1) {
      problems.push(`"${claim.text}": \`${claim.token}\` is ${matches.map((f) => f.path).join(' and ')}; write the field's full path`);
      continue;
    }
    const [field] = matches;
    const expected = field.schema[claim.kind];
    const stated = inFieldUnit(claim.value, claim.unit, field.path.split('.').pop()!);
    checked.add(field.path);
    if (expected !== stated) problems.push(`"${claim.text}": the schema's ${claim.kind} of spec.${field.path} is ${String(expected)}, the doc says ${stated}`);
  }
  assert.deepEqual(problems, []);
  // The parsing found the numbers it is there for (a reworded doc must not pass unread).
  assert.ok(checked.has('triton.startupTimeoutSeconds') && checked.size >= 3, `fields checked: ${[...checked].join(', ')}`);
});

// ------------------------------------------- names and metrics in the CRD's descriptions

function descriptions(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(descriptions);
  if (schema === null || typeof schema !== 'object') return [];
  return Object.entries(schema).flatMap(([k, v]) => (k === 'description' && typeof v === 'string' ? [v] : descriptions(v)));
}

describe("the CRD's descriptions name what the operator produces", () => {
  const texts = descriptions(RecognitionServiceSchema);

  test('every <name>-... object name is one the operator creates', () => {
    const rs = sampleResource({}, 'vision');
    const produced = [...new Set([...desiredState(rs, { serviceMonitor: true }).apply, signingSecret(rs, 'key')!]
      .map((o) => o.metadata.name.replace(/^vision/, '<name>')))];
    const mentioned = texts.flatMap((t) => [...t.matchAll(/<name>(?:-[a-z0-9]+)*/g)].map((m) => m[0]));
    assert.ok(mentioned.length > 0, 'the descriptions name at least one object (the signing Secret)');
    for (const name of mentioned) assert.ok(produced.includes(name), `${name} is not a name the operator produces (it produces ${produced.join(', ')})`);
  });

  test('every metric named is one the default autoscalers use, and each of theirs is named', () => {
    const used = new Set<string>();
    const collect = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(collect);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === 'metric' && x && typeof (x as { name?: unknown }).name === 'string') used.add((x as { name: string }).name);
          collect(x);
        }
      }
    };
    collect([defaultMetrics('api'), defaultMetrics('triton')]);
    assert.ok(used.size > 0, 'the default autoscalers use a custom metric');
    // Prometheus-style names: lower-case words joined by underscores (three words or more).
    const named = new Set(texts.flatMap((t) => [...t.matchAll(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}\b/g)].map((m) => m[0])));
    for (const n of named) assert.ok(used.has(n), `a description names metric ${n}; the autoscalers use ${[...used].join(', ')}`);
    for (const n of used) assert.ok(named.has(n), `the default autoscalers use ${n}; no description names it`);
  });
});

// ------------------------------------------------------------------ RBAC: doc vs chart

type Rules = Map<string, string>;

/**
 * Rules of the chart's ClusterRole and Role, as "Kind group resource" -> "verb, verb" (sorted).
 * The ClusterRole's rules (also those of each watched namespace's Role in a namespaced
 * install) are files/rules.yaml, a plain list.
 */
function chartRules(): Rules {
  const rules: Rules = new Map();
  const watched = parseAllDocuments(read('charts/recognition-operator/files/rules.yaml'))[0].toJS() as Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
  for (const r of watched) {
    for (const g of r.apiGroups) for (const res of r.resources) rules.set(`ClusterRole ${g || '""'} ${res}`, [...r.verbs].sort().join(', '));
  }
  for (const file of ['clusterrole.yaml', 'role.yaml']) {
    // Helm's actions: lines that are only {{ ... }} go, others become a plain placeholder.
    const text = read(`charts/recognition-operator/templates/${file}`)
      .split('\n')
      .filter((l) => !/^\s*\{\{.*\}\}\s*$/.test(l))
      .join('\n')
      .replace(/\{\{.*?\}\}/g, 'TEMPLATE');
    for (const doc of parseAllDocuments(text)) {
      const obj = doc.toJS() as { kind?: string; rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> } | null;
      if (!obj || (obj.kind !== 'ClusterRole' && obj.kind !== 'Role')) continue;
      for (const r of obj.rules ?? []) {
        for (const g of r.apiGroups) for (const res of r.resources) rules.set(`${obj.kind} ${g || '""'} ${res}`, [...r.verbs].sort().join(', '));
      }
    }
  }
  return rules;
}

/** docs/operator.md's table: API group (`""` = core), resource ("(Role ...)" for the namespaced Role), verbs. */
function docRules(): Rules {
  const rules: Rules = new Map();
  for (const [groupCell, resourceCell, verbsCell] of tableRows(read('docs/operator.md'), ['API group', 'resource', 'verbs'])) {
    const quoted = /`([^`]*)`/.exec(groupCell)?.[1];
    const group = quoted === undefined || quoted === '""' ? '' : quoted;
    const resource = /^[a-z][a-z/]*/.exec(resourceCell)?.[0] ?? resourceCell;
    const kind = /\(Role\b/.test(resourceCell) ? 'Role' : 'ClusterRole';
    const verbs = verbsCell.split(',').map((v) => v.trim()).filter(Boolean).sort().join(', ');
    const key = `${kind} ${group || '""'} ${resource}`;
    assert.ok(!rules.has(key), `docs/operator.md lists ${key} twice`);
    rules.set(key, verbs);
  }
  return rules;
}

test("docs/operator.md's RBAC table lists exactly the rules of the chart's roles", () => {
  const chart = chartRules();
  assert.ok(chart.size > 0, "the chart's roles have rules");
  assert.deepEqual(Object.fromEntries([...docRules()].sort()), Object.fromEntries([...chart].sort()));
});

// --------------------------------------------------------- PostgreSQL tables: docs vs migrations

/**
 * The tables the migrations leave, found by running each `up` against a recorder that
 * stands in for knex: createTable/dropTable/renameTable calls and CREATE/DROP TABLE in raw SQL.
 */
async function migrationTables(): Promise<string[]> {
  const tables = new Set<string>();
  const sql = (text: string) => {
    for (const m of text.matchAll(/\bcreate\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?"?(\w+)/gi)) tables.add(m[1]);
    for (const m of text.matchAll(/\bdrop\s+table\s+(?:if\s+exists\s+)?"?(\w+)/gi)) tables.delete(m[1]);
  };
  // Anything else (column builders, knex.fn.now(), alterTable) is a chain that accepts every call.
  const chain: any = new Proxy(function () {}, {
    get: (_t, prop) => (prop === 'then' ? undefined : chain),
    apply: () => chain,
  });
  const schema: Record<string, unknown> = {
    createTable: (name: string, build?: (t: unknown) => void) => (tables.add(name), build?.(chain), chain),
    createTableIfNotExists: (name: string, build?: (t: unknown) => void) => (tables.add(name), build?.(chain), chain),
    dropTable: (name: string) => (tables.delete(name), chain),
    dropTableIfExists: (name: string) => (tables.delete(name), chain),
    renameTable: (from: string, to: string) => (tables.delete(from), tables.add(to), chain),
    raw: (text: string) => (sql(text), chain),
  };
  const knex = new Proxy(function () {}, {
    get: (_t, prop) =>
      prop === 'schema' ? new Proxy(schema, { get: (s, p: string) => s[p] ?? chain }) : prop === 'raw' ? (text: string) => (sql(text), chain) : prop === 'then' ? undefined : chain,
    apply: () => chain,
  }) as unknown as Knex;
  for (const m of migrations) await m.up(knex);
  return [...tables].sort();
}

/** Backticked names in a doc's "- PostgreSQL tables: ..." list item (its continuation lines included). */
function documentedTables(markdown: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^\s*- PostgreSQL tables:/.test(l));
  assert.ok(start >= 0, 'a "- PostgreSQL tables:" item');
  const item = [lines[start]];
  for (const l of lines.slice(start + 1)) {
    if (!/^\s{2,}\S/.test(l)) break;
    item.push(l);
  }
  return [...item.join(' ').matchAll(/`([a-z_][a-z0-9_]*)`/g)].map((m) => m[1]);
}

describe('the PostgreSQL table lists name every table the migrations create', () => {
  for (const file of ['README.md', 'docs/api.md']) {
    test(file, async () => {
      const created = await migrationTables();
      assert.ok(created.includes('requests'), `the recorder saw the migrations' tables: ${created.join(', ')}`);
      const listed = documentedTables(read(file));
      assert.deepEqual(created.filter((t) => !listed.includes(t)), [], `${file} misses tables`);
      // knex's migrator keeps its own two tables (src/store/migrate.ts names them knex_migrations).
      assert.deepEqual(listed.filter((t) => !created.includes(t) && !/^knex_migrations(_lock)?$/.test(t)), [], `${file} lists tables no migration creates`);
    });
  }
});
