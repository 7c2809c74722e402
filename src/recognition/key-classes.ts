/**
 * The classes an API key may see, one rule however the key is made (the server CLI, the
 * console): entries are trimmed, empty ones dropped and repeats removed (the first kept);
 * none left means no classes; '*' means all of them and stands alone; anything else must be
 * a label of the model catalog. Each caller words the problem as its own error.
 */

export type KeyClasses = { classes: string[] } | { problem: string };

/** Names shown at most in a problem, so a long bad list does not make a long answer. */
const SHOWN = 5;

/**
 * `labels` gives the catalog's labels; it is called only when a label has to be checked,
 * so a key for all classes (or none) is made even while the catalog cannot be read.
 */
export async function keyClasses(entries: readonly string[], labels: () => Promise<readonly string[]>): Promise<KeyClasses> {
  const classes = [...new Set(entries.map((s) => s.trim()).filter((s) => s !== ''))];
  if (classes.includes('*')) return classes.length > 1 ? { problem: '"*" (all classes) stands alone' } : { classes };
  if (classes.length === 0) return { classes };
  const known = new Set(await labels());
  const unknown = classes.filter((c) => !known.has(c));
  if (unknown.length === 0) return { classes };
  const more = unknown.length > SHOWN ? ` and ${unknown.length - SHOWN} more` : '';
  const names = unknown.slice(0, SHOWN).map((u) => `"${u}"`).join(', ');
  return { problem: `unknown class ${names}${more} (not in the model catalog)` };
}
