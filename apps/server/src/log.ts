/**
 * One-line structured logs: `2026-11-22T22:10:00.000Z info session.login sid=12 user=alice`.
 * One line per event (connection, login, close, error), never per message. The sink is
 * replaceable (tests silence or capture it).
 */

/** Log severity. */
export type LogLevel = 'info' | 'warn' | 'error';

/** Key-value details of an event; values are printed with JSON.stringify when not plain. */
export type LogFields = Record<string, string | number | boolean | undefined | null>;

/** Receives formatted lines. */
export type LogSink = (level: LogLevel, line: string) => void;

const defaultSink: LogSink = (level, line) => {
  if (level === 'info') process.stdout.write(line + '\n');
  else process.stderr.write(line + '\n');
};

let sink: LogSink = defaultSink;

/** Replaces the sink (undefined restores stdout/stderr). Affects the current thread only. */
export function setLogSink(next: LogSink | undefined): void {
  sink = next ?? defaultSink;
}

function format(value: string | number | boolean | null): string {
  return typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
}

/** Passes an already formatted line to the sink (lines forwarded from transport worker threads). */
export function logLine(level: LogLevel, line: string): void {
  sink(level, line);
}

/** Logs `event` with `fields` (undefined values are left out). */
export function log(level: LogLevel, event: string, fields: LogFields = {}): void {
  let line = `${new Date().toISOString()} ${level} ${event}`;
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) line += ` ${k}=${format(v)}`;
  sink(level, line);
}

/**
 * True for 1, 10, 100, ...: which occurrences of a repeated event (a connection's failed logins, a
 * transport's frameless closes) are logged, so a flood costs a handful of lines, not one per event.
 */
export function isPowerOfTen(n: number): boolean {
  if (!Number.isSafeInteger(n) || n < 1) return false;
  while (n % 10 === 0) n /= 10;
  return n === 1;
}
