/**
 * Subject patterns of entitlement rules: globs over `/`-separated segments.
 *
 * - `*` inside a segment matches any characters of that segment (`/FX/EUR*`, `/FX/*`);
 * - a whole segment `**` matches zero or more segments (`/PRODUCT/**`, `/**`);
 * - `{user}` is replaced by the name of the user the rule is evaluated for (`/BLOTTER/{user}`);
 * - a leading `!` makes the rule a deny rule (deny wins over any allow).
 *
 * Everything else is literal (subject characters `[A-Za-z0-9_.@:-]`), so a pattern never runs
 * arbitrary regular expressions.
 */

/** Most characters of one pattern (a subject is at most 256 bytes; placeholders add a little). */
export const MAX_PATTERN_CHARS = 512;

/** Most `**` segments in one pattern. */
export const MAX_GLOBSTARS = 2;
/** Most `*` wildcards inside segments of one pattern. */
export const MAX_STARS = 4;

/** One segment: subject characters, `*` wildcards and the `{user}` placeholder; or `**` alone. */
const SEGMENT = /^(?:\*\*|(?:[A-Za-z0-9_.@:*-]|\{user\})+)$/;

/** Why a pattern text is not a valid pattern, or undefined when it is. */
export function patternError(text: unknown): string | undefined {
  if (typeof text !== 'string') return `must be a string, got ${JSON.stringify(text)}`;
  const body = text.startsWith('!') ? text.slice(1) : text;
  if (body.length === 0 || body.length > MAX_PATTERN_CHARS) return `must be 1..${MAX_PATTERN_CHARS} characters, got ${text.length}`;
  if (!body.startsWith('/')) return `must start with '/' (or '!/' for a deny rule), got ${JSON.stringify(text)}`;
  const segments = body.slice(1).split('/');
  const globstars = segments.filter((s) => s === '**').length;
  const stars = segments.filter((s) => s !== '**').join('').split('*').length - 1;
  if (globstars > MAX_GLOBSTARS || stars > MAX_STARS) {
    return `${JSON.stringify(text)} has ${globstars} '**' and ${stars} '*'; at most ${MAX_GLOBSTARS} and ${MAX_STARS} are allowed (bounded matching cost)`;
  }
  for (const s of segments) {
    if (!SEGMENT.test(s)) {
      return `segment ${JSON.stringify(s)} of ${JSON.stringify(text)} must be '**' or subject characters [A-Za-z0-9_.@:-] with '*' and '{user}'`;
    }
  }
  return undefined;
}

/** A compiled pattern for one user. */
export interface CompiledPattern {
  /** The pattern text as configured (with `!`). */
  readonly text: string;
  /** True for `!` (deny) rules. */
  readonly deny: boolean;
  /** True when `subject` matches. */
  test(subject: string): boolean;
}

function escape(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

/**
 * Compiles `text` (already valid: see patternError) for `user`. The result is anchored: the whole
 * subject must match. Wildcards never cross a `/` and their number is capped (patternError), so
 * matching a hostile subject stays cheap.
 */
export function compilePattern(text: string, user: string): CompiledPattern {
  const deny = text.startsWith('!');
  const body = (deny ? text.slice(1) : text).slice(1);
  let source = '^';
  for (const segment of body.split('/')) {
    if (segment === '**') {
      source += '(?:/[^/]+)*';
      continue;
    }
    const withUser = segment.split('{user}').map((part) => part.split('*').map(escape).join('[^/]*')).join(escape(user));
    source += `/${withUser}`;
  }
  source += '$';
  // subjects are at most 256 bytes and patterns hold at most 2 `**` and 4 `*`: the worst
  // backtracking is polynomial of a small degree over a short string
  const re = new RegExp(source);
  return { text, deny, test: (subject) => re.test(subject) };
}
