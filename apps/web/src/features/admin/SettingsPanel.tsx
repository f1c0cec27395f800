import { useEffect, useState, type FormEvent } from 'react';
import type { BatchingSettings } from '@tidewire/protocol';

const FIELDS: ReadonlyArray<{ key: keyof BatchingSettings; label: string; hint: string }> = [
  { key: 'burstMinMs', label: 'burst min (ms)', hint: '1..60000' },
  { key: 'burstMaxMs', label: 'burst max (ms)', hint: '0 = batching off, else ≥ burst min' },
  { key: 'burstIncrementMs', label: 'burst increment (ms)', hint: '1..60000' },
  { key: 'throttleMs', label: 'throttle (ms)', hint: '0 = off' },
];

/**
 * Batching settings in force, editable: Apply sends the changed values; the server validates,
 * applies them to the next flushes and writes the audit log. Shows the server's answer.
 */
export function SettingsPanel({ current, onApply }: { current: BatchingSettings | undefined; onApply: (patch: Partial<BatchingSettings>) => Promise<string> }) {
  const [draft, setDraft] = useState<Record<string, string>>({});
  const [status, setStatus] = useState<{ ok: boolean; text: string } | undefined>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (current && Object.keys(draft).length === 0) setDraft(Object.fromEntries(FIELDS.map((f) => [f.key, String(current[f.key])])));
  }, [current, draft]);

  async function submit(e: FormEvent): Promise<void> {
    e.preventDefault();
    if (!current) return;
    const patch: Partial<BatchingSettings> = {};
    for (const f of FIELDS) {
      const text = (draft[f.key] ?? '').trim();
      const value = Number(text);
      if (text === '' || !Number.isInteger(value)) {
        setStatus({ ok: false, text: `${f.label} must be a whole number, got "${text}"` });
        return;
      }
      if (value !== current[f.key]) patch[f.key] = value;
    }
    if (Object.keys(patch).length === 0) {
      setStatus({ ok: true, text: 'nothing changed' });
      return;
    }
    setBusy(true);
    try {
      setStatus({ ok: true, text: await onApply(patch) });
    } catch (err) {
      setStatus({ ok: false, text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="admin-settings" onSubmit={(e) => void submit(e)} data-testid="admin-settings">
      <h2>Batching</h2>
      {FIELDS.map((f) => (
        <label key={f.key}>
          <span>{f.label}</span>
          <input inputMode="numeric" value={draft[f.key] ?? ''} disabled={!current} title={f.hint}
            onChange={(e) => setDraft({ ...draft, [f.key]: e.target.value })} data-testid={`setting-${f.key}`} />
          <span className="page-hint">in force: {current?.[f.key] ?? '…'}</span>
        </label>
      ))}
      <button type="submit" className="button-primary" disabled={busy || !current} data-testid="settings-apply">Apply</button>
      {status && <p className={status.ok ? 'page-hint' : 'inline-error'} role="status" data-testid="settings-status">{status.text}</p>}
    </form>
  );
}
