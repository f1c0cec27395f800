/**
 * Links that open the blotter with an instrument in the order ticket (`#/blotter?instrument=...`):
 * the product finder sends a double-clicked product there. Pure: ticket-link.test.ts. The link is
 * untrusted input (anyone can type a URL): a bad one opens an empty ticket, never a crash.
 */

import { baseSubject } from './instrument-search.js';
import type { TicketInstrument } from './ticket-form.js';

/** Longest subject a link may carry (the protocol's subject limit). */
const MAX_SUBJECT = 256;
/** Longest label or description kept from a link. */
const MAX_TEXT = 200;

/**
 * The location hash of the blotter with `instrument` in the ticket:
 * `#/blotter?instrument=%2FPRODUCT%2FX&label=X&description=...`. A tier subject (a view row's
 * `/PRODUCT/X@T2`) is linked by its base subject: orders name it and the server maps its
 * subscription to the user's tier.
 */
export function ticketHash(instrument: TicketInstrument): string {
  const q = new URLSearchParams({ instrument: baseSubject(instrument.subject), label: instrument.label, description: instrument.description });
  return `#/blotter?${q.toString()}`;
}

/**
 * The instrument a blotter hash names, or undefined when it names none or a bad one: the subject
 * must start with `/`, be at most 256 characters and hold no whitespace; a tier suffix (`@T2`) is
 * dropped. A missing label is the subject's last segment; label and description are cut at 200
 * characters.
 */
export function instrumentFromHash(hash: string): TicketInstrument | undefined {
  const at = hash.indexOf('?');
  if (at < 0) return undefined;
  let q: URLSearchParams;
  try {
    q = new URLSearchParams(hash.slice(at + 1));
  } catch {
    return undefined;
  }
  const subject = baseSubject(q.get('instrument') ?? '');
  if (!subject.startsWith('/') || subject.length < 2 || subject.length > MAX_SUBJECT || /\s/.test(subject)) return undefined;
  const label = (q.get('label') ?? '').trim().slice(0, MAX_TEXT) || (subject.split('/').pop() ?? subject);
  const description = (q.get('description') ?? '').trim().slice(0, MAX_TEXT);
  return { subject, label, description };
}
