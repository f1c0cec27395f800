/**
 * Patterns compared with patterns (patterns.ts syntax, `{user}` already replaced): whether every
 * subject one matches the other matches too (`covers`), and whether any subject matches both
 * (`intersects`). A statement's stream is a pattern (`/PRODUCT/*`); the rules that may read it
 * are patterns too (entitlements.ts `statementRefusal`).
 *
 * `covers` is exact: a segment glob `a` covers a glob `p` exactly when `a` matches the text of
 * `p` with each of `p`'s `*` read as a fresh character only `a`'s `*` can take (the literal parts
 * of `a` are subject characters, never `*`). `intersects` may answer true for two segment globs
 * with stars at both ends that share no subject: it is used for deny rules and readers, where a
 * false "intersects" refuses more, never less.
 */

/** The segments of a pattern (without the leading `/` and any `!`). */
export function segments(pattern: string): string[] {
  const body = pattern.startsWith('!') ? pattern.slice(1) : pattern;
  return body.slice(1).split('/');
}

function globRegex(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')).join('.*')}$`);
}

/** True when segment glob `a` matches every segment glob `p` matches. */
function segmentCovers(a: string, p: string): boolean {
  return a === '*' || (a.includes('*') ? globRegex(a).test(p) : a === p);
}

/** True when some segment matches both globs (conservative: see the module doc). */
function segmentsIntersect(a: string, b: string): boolean {
  if (!a.includes('*')) return !b.includes('*') ? a === b : globRegex(b).test(a);
  if (!b.includes('*')) return globRegex(a).test(b);
  const prefix = (g: string) => g.slice(0, g.indexOf('*'));
  const suffix = (g: string) => g.slice(g.lastIndexOf('*') + 1);
  const [pa, pb, sa, sb] = [prefix(a), prefix(b), suffix(a), suffix(b)];
  return (pa.startsWith(pb) || pb.startsWith(pa)) && (sa.endsWith(sb) || sb.endsWith(sa));
}

function coversFrom(a: readonly string[], i: number, p: readonly string[], j: number): boolean {
  if (i === a.length) return j === p.length;
  if (a[i] === '**') return coversFrom(a, i + 1, p, j) || (j < p.length && coversFrom(a, i, p, j + 1));
  if (j === p.length || p[j] === '**') return false;
  return segmentCovers(a[i]!, p[j]!) && coversFrom(a, i + 1, p, j + 1);
}

function intersectsFrom(a: readonly string[], i: number, b: readonly string[], j: number): boolean {
  if (i === a.length && j === b.length) return true;
  if (i < a.length && a[i] === '**') return intersectsFrom(a, i + 1, b, j) || (j < b.length && intersectsFrom(a, i, b, j + 1));
  if (j < b.length && b[j] === '**') return intersectsFrom(a, i, b, j + 1) || (i < a.length && intersectsFrom(a, i + 1, b, j));
  if (i === a.length || j === b.length) return false;
  return segmentsIntersect(a[i]!, b[j]!) && intersectsFrom(a, i + 1, b, j + 1);
}

/** True when every subject `p` matches, `a` matches too. */
export function covers(a: string, p: string): boolean {
  return coversFrom(segments(a), 0, segments(p), 0);
}

/** True when some subject may match both `a` and `b` (never false when one does). */
export function intersects(a: string, b: string): boolean {
  return intersectsFrom(segments(a), 0, segments(b), 0);
}
