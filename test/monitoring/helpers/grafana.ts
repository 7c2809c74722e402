/**
 * Grafana dashboard JSON as the live-query test needs it: every panel's Prometheus targets
 * (rows' nested panels included), and the dashboard's template variables resolved the way
 * Grafana resolves them against the data source, so a panel query runs with the values a
 * user would see rather than values the test made up.
 */

export interface PanelTarget {
  panel: string;
  refId: string;
  expr: string;
}

interface Panel {
  title?: string;
  type?: string;
  targets?: Array<{ expr?: string; refId?: string }>;
  panels?: Panel[];
}

export interface TemplateVariable {
  name: string;
  type: string;
  query?: string | { query?: string };
  definition?: string;
  multi?: boolean;
  includeAll?: boolean;
  current?: { value?: string | string[]; text?: string | string[] };
  options?: Array<{ value: string }>;
}

export interface Dashboard {
  title?: string;
  panels?: Panel[];
  rows?: Panel[];
  templating?: { list?: TemplateVariable[] };
}

/** Every target with an expression, in panel order; a row's collapsed panels count too. */
export function panelTargets(dashboard: Dashboard): PanelTarget[] {
  const out: PanelTarget[] = [];
  const walk = (panels: Panel[] | undefined) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) {
        if (typeof t.expr === 'string' && t.expr.trim() !== '') out.push({ panel: p.title ?? '(untitled)', refId: t.refId ?? '?', expr: t.expr });
      }
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  walk(dashboard.rows);
  return out;
}

/** Grafana's built-in interval variables, fixed for an instant query over a short run. */
export const BUILTINS: Readonly<Record<string, string>> = {
  __rate_interval: '1m',
  __interval: '15s',
  __interval_ms: '15000',
  __range: '5m',
  __range_s: '300',
  __range_ms: '300000',
};

/** The text of a `query` variable's query (Grafana has stored it as a string and as an object). */
function variableQuery(v: TemplateVariable): string {
  if (typeof v.query === 'string') return v.query;
  return v.query?.query ?? v.definition ?? '';
}

/**
 * Replaces `$name`, `${name}`, `${name:format}` and `[[name]]` of the given values (longest
 * names first, so `$pod` does not eat `$podName`). Multi values become a regex alternation,
 * as Grafana formats them for `=~`.
 */
export function interpolate(text: string, values: Readonly<Record<string, string | string[]>>): string {
  const names = Object.keys(values).sort((a, b) => b.length - a.length);
  let out = text;
  for (const name of names) {
    const v = values[name];
    const value = Array.isArray(v) ? (v.length === 1 ? v[0] : `(${v.join('|')})`) : v;
    const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`\\$\\{${esc}(?::[^}]*)?\\}|\\[\\[${esc}\\]\\]|\\$${esc}(?![A-Za-z0-9_])`, 'g'), () => value);
  }
  return out;
}

/** Label values for a variable query, as Grafana's Prometheus data source answers them. */
export type LabelValues = (label: string, match: string | undefined) => Promise<string[]>;

/**
 * The value of each template variable, in the dashboard's order (a variable may use the ones
 * before it): the data source variable is dropped (it never appears in an expression),
 * `label_values()` queries are asked of Prometheus, and of the values found the one this run
 * prefers is taken, or all of them when the variable allows All or many, or else the first,
 * as Grafana's default selection does. Throws, naming the variable, when one resolves to nothing.
 */
export async function resolveVariables(dashboard: Dashboard, labelValues: LabelValues, preferred: Readonly<Record<string, string>>): Promise<Record<string, string | string[]>> {
  const values: Record<string, string | string[]> = { ...BUILTINS };
  for (const v of dashboard.templating?.list ?? []) {
    if (v.type === 'datasource') continue;
    let found: string[];
    if (v.type === 'query') {
      const q = interpolate(variableQuery(v), values).trim();
      const m = /^label_values\(\s*(?:(.*?)\s*,\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)$/s.exec(q);
      if (!m) throw new Error(`variable $${v.name}: only label_values() queries are understood here (got "${q}")`);
      found = await labelValues(m[2], m[1] || undefined);
    } else if (v.type === 'custom') {
      found = variableQuery(v)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    } else {
      // constant, textbox, interval: what the dashboard carries.
      const cur = v.current?.value ?? variableQuery(v);
      found = (Array.isArray(cur) ? cur : [cur]).filter((s) => s !== '' && s !== '$__all');
    }
    if (found.length === 0) throw new Error(`variable $${v.name} (${v.type} "${variableQuery(v)}") has no value in this Prometheus`);
    const want = preferred[v.name];
    if (want !== undefined && found.includes(want)) values[v.name] = want;
    else if (v.includeAll || v.multi) values[v.name] = found;
    else values[v.name] = found[0]!;
  }
  return values;
}
