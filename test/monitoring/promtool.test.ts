/**
 * The alert rules as promtool sees them: `promtool check rules` on the chart's rules file,
 * `promtool test rules` on test/monitoring/rules.test.yaml, and the bookkeeping that keeps
 * every alert reachable by an SRE: a firing and a quiet test case, a severity, and a
 * runbook_url whose #anchor is a heading of docs/runbooks.md.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { prometheusTools } from '../helpers/prometheus.js';

const RULES = path.join(REPO_ROOT, 'charts/recognition-operator/files/monitoring/rules.yaml');
const RULE_TESTS = path.join(REPO_ROOT, 'test/monitoring/rules.test.yaml');
const RUNBOOKS = path.join(REPO_ROOT, 'docs/runbooks.md');
const SEVERITIES = new Set(['page', 'ticket', 'warning']);

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}
interface RuleTestFile {
  rule_files: string[];
  tests: { name: string; alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
}

const rules = parse(readFileSync(RULES, 'utf8')) as RuleFile;
const alerts = rules.groups.flatMap((g) => g.rules).filter((r): r is Rule & { alert: string } => r.alert !== undefined);
const ruleTests = parse(readFileSync(RULE_TESTS, 'utf8')) as RuleTestFile;

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}
const headings = readFileSync(RUNBOOKS, 'utf8')
  .split('\n')
  .filter((line) => /^#{1,6} /.test(line))
  .map((line) => line.replace(/^#+ /, ''));
const anchors = new Set(headings.map(anchorOf));

// Found on first use, not at import (scripts/pretest.sh installs them).
let promtool = '';

function run(...args: string[]): { status: number | null; output: string } {
  const r = spawnSync(promtool, args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('promtool', () => {
  before(async () => {
    promtool = (await prometheusTools()).promtool;
  });

  test('promtool check rules: the rules file is valid', () => {
    const r = run('check', 'rules', RULES);
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, /SUCCESS: \d+ rules found/);
  });

  test('promtool test rules: every case of rules.test.yaml passes', () => {
    const r = run('test', 'rules', RULE_TESTS);
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, /SUCCESS/);
    assert.doesNotMatch(r.output, /FAILED/);
  });

  test('the firing cases catch a dead alert: with every expression never true, each alert fails its test', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rules-mutant-'));
    try {
      const dead: RuleFile = { groups: rules.groups.map((g) => ({ ...g, rules: g.rules.map((r) => (r.alert ? { ...r, expr: 'vector(0) > 1' } : r)) })) };
      writeFileSync(path.join(dir, 'rules.yaml'), stringify(dead));
      writeFileSync(path.join(dir, 'rules.test.yaml'), stringify({ ...ruleTests, rule_files: ['rules.yaml'] }));
      const r = run('test', 'rules', path.join(dir, 'rules.test.yaml'));
      assert.notEqual(r.status, 0, 'promtool must fail when no alert can fire');
      for (const a of alerts) assert.match(r.output, new RegExp(`alertname: ${a.alert},`), `${a.alert}: no firing case noticed it never fires`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('rules.test.yaml reads the chart rules file', () => {
  assert.deepEqual(ruleTests.rule_files.map((f) => path.resolve(path.dirname(RULE_TESTS), f)), [RULES]);
});

test('every alert has a firing and a quiet test case', () => {
  assert.ok(alerts.length > 0);
  const cases = ruleTests.tests.flatMap((t) => t.alert_rule_test ?? []);
  for (const a of alerts) {
    const mine = cases.filter((c) => c.alertname === a.alert);
    assert.ok(mine.some((c) => (c.exp_alerts ?? []).length > 0), `${a.alert}: no case where it fires`);
    assert.ok(mine.some((c) => (c.exp_alerts ?? []).length === 0), `${a.alert}: no case where it stays quiet`);
  }
  const names = new Set(alerts.map((a) => a.alert));
  for (const c of cases) assert.ok(names.has(c.alertname), `rules.test.yaml tests ${c.alertname}, which is not an alert`);
});

test('every alert has a for:, a severity, a summary, a description and a runbook_url to a section of docs/runbooks.md', () => {
  const names = alerts.map((a) => a.alert);
  assert.equal(new Set(names).size, names.length, 'alert names are unique');
  for (const a of alerts) {
    assert.match(a.for ?? '', /^\d+[smh]$/, `${a.alert}: for:`);
    assert.ok(SEVERITIES.has(a.labels?.severity ?? ''), `${a.alert}: severity ${a.labels?.severity} is not one of page, ticket, warning`);
    assert.ok(a.annotations?.summary, `${a.alert}: summary`);
    assert.ok(a.annotations?.description, `${a.alert}: description`);
    const m = /^docs\/runbooks\.md#([a-z0-9-]+)$/.exec(a.annotations?.runbook_url ?? '');
    assert.ok(m, `${a.alert}: runbook_url ${a.annotations?.runbook_url} is not docs/runbooks.md#<anchor>`);
    assert.ok(anchors.has(m[1]), `${a.alert}: docs/runbooks.md has no heading with anchor #${m[1]}`);
  }
});

test('docs/runbooks.md has no section for an alert that does not exist', () => {
  const names = new Set(alerts.map((a) => a.alert));
  const sections = headings.filter((h) => /^Recognition[A-Za-z]+$/.test(h.trim()));
  for (const h of sections) assert.ok(names.has(h.trim()), `docs/runbooks.md: section ${h} names no alert`);
  assert.equal(sections.length, names.size, 'one section per alert');
});
