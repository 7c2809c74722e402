/**
 * PromQL read with the Prometheus project's own grammar (@prometheus-io/lezer-promql, the
 * parser behind its web UI), so the test finds every vector selector of an expression the way
 * Prometheus does, inside functions, aggregations, binary operations and subqueries.
 */
import { parser } from '@prometheus-io/lezer-promql';

export interface ParsedSelectors {
  /** Each distinct vector selector, as written: `name{matchers}` (no range, offset or @). */
  selectors: string[];
  /** Text around each syntax error the grammar found (empty when the expression parses). */
  errors: string[];
}

export function vectorSelectors(expr: string): ParsedSelectors {
  const selectors = new Set<string>();
  const errors: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) errors.push(`near "${expr.slice(Math.max(0, node.from - 10), node.to + 10)}"`);
      if (node.name === 'VectorSelector') {
        selectors.add(expr.slice(node.from, node.to).replace(/\s+/g, ' ').trim());
        return false;
      }
      return undefined;
    },
  });
  return { selectors: [...selectors], errors };
}
