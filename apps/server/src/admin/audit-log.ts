/**
 * The admin audit log: one JSON line per admin action (settings change, kick) with who, when,
 * and the old and new values, appended to `<admin.auditDir>/admin-audit.jsonl`. Writes are
 * serialised; the directory is created on the first write.
 */

import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';

/** File name inside `admin.auditDir`. */
export const AUDIT_FILE = 'admin-audit.jsonl';

/** One audit entry (a line of the file). */
export type AuditEntry =
  | { at: string; by: string; action: 'batching'; old: object; new: object }
  | { at: string; by: string; action: 'kick'; sessionId: number; user: string | undefined; reason: string }
  | { at: string; by: string; action: 'reload'; users: number; closedSessions: number; removedSubscriptions: number; closedViews: number }
  | { at: string; by: string; action: 'fixLogout'; session: string };

/** Appends entries to the audit file, in call order. */
export class AuditLog {
  /** Full path of the file. */
  readonly file: string;
  private tail: Promise<void> = Promise.resolve();
  private dirReady = false;

  constructor(dir: string) {
    this.file = path.join(dir, AUDIT_FILE);
  }

  /** Appends `entry`; rejects when the file cannot be written (the caller reports it). */
  append(entry: AuditEntry): Promise<void> {
    const line = JSON.stringify(entry) + '\n';
    const write = this.tail.then(async () => {
      if (!this.dirReady) {
        await mkdir(path.dirname(this.file), { recursive: true });
        this.dirReady = true;
      }
      await appendFile(this.file, line, 'utf8');
    });
    // one failed write must not block later ones
    this.tail = write.catch(() => undefined);
    return write;
  }
}
