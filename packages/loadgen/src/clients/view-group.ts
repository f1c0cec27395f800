/**
 * The shape of a group of view users, whichever engine runs it (view-user-group.ts starts one:
 * native-view-group.ts, or view-users.ts in a worker, view-users-worker.ts): its options, its
 * calls, the worker's commands and the left clock the users read. Its own module so that the
 * engines need not import the module that picks between them.
 */

import type { CreateOutcome, ViewSpec, ViewUsersOptions, ViewUsersReport } from './view-users.js';

/**
 * Where the send time (epoch ms) of each record's latest update lives: a Float64Array over `sab`,
 * indexed by record number. `flat`: subjects `<prefix>/<i>`; `blotter`: `/BENCH/TRADE/<u>/<n>` at
 * `u * tradeCap + n`.
 */
export type LeftClock =
  | { kind: 'flat'; sab: SharedArrayBuffer; prefix: string }
  | { kind: 'blotter'; sab: SharedArrayBuffer; tradeCap: number };

/** The `leftPublishedMs` of a `LeftClock`: undefined for unknown subjects or records never updated. */
export function leftResolver(c: LeftClock): (subject: string) => number | undefined {
  const sent = new Float64Array(c.sab);
  const at = (i: number): number | undefined => (Number.isInteger(i) && i >= 0 && i < sent.length && sent[i] !== 0 ? sent[i] : undefined);
  if (c.kind === 'flat') {
    const skip = c.prefix.length + 1;
    return (subject) => (subject.startsWith(c.prefix) ? at(Number(subject.slice(skip))) : undefined);
  }
  return (subject) => {
    const parts = subject.split('/'); // ['', 'BENCH', 'TRADE', u, n]
    const u = Number(parts[3]);
    const n = Number(parts[4]);
    return Number.isInteger(n) && n >= 0 && n < c.tradeCap ? at(u * c.tradeCap + n) : undefined;
  };
}

/** Which simulator runs a group: `auto` is the Rust one when built, else Node `ws` users. */
export type ViewEngine = 'auto' | 'native' | 'node';

/** Options of a group: those of `ViewUsers` (without functions) plus the left clock and the engine. */
export type GroupOptions = Omit<ViewUsersOptions, 'clock' | 'leftPublishedMs'> & {
  left?: LeftClock;
  /** @default 'auto' */
  engine?: ViewEngine;
  /** Socket threads of the native engine. @default 2 */
  threads?: number;
};

/** A group of view users: the Rust simulator, or Node users in a worker or here. */
export interface ViewUserGroup {
  /** The engine that runs it. */
  readonly engine: 'native' | 'node';
  openView(index: number, token: string, spec: ViewSpec): Promise<CreateOutcome>;
  closeUser(index: number): Promise<void>;
  closeAll(): Promise<void>;
  /** Counters and histograms since the previous call. */
  take(): Promise<ViewUsersReport>;
  stop(): Promise<void>;
}

/** A command to the worker (`view-users-worker.ts`). */
export type GroupCommand =
  | { id: number; cmd: 'openView'; index: number; token: string; spec: ViewSpec }
  | { id: number; cmd: 'closeUser'; index: number }
  | { id: number; cmd: 'closeAll' | 'take' | 'stop' };
