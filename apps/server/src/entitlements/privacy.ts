/**
 * Private records, as the engine enforces them (packages/engine/src/orders/privacy.rs): a user's
 * trade records `/TRADE/<user>/...` and blotter `/BLOTTER/<user>` are readable by that user
 * only, whatever the rules grant; `/TRADE` and `/BLOTTER` themselves by nobody. The server checks
 * the same before calling the engine so that a refusal is an error it counts (and its view of a
 * session's subscriptions stays what the engine holds).
 */

const TRADE = '/TRADE';
const BLOTTER = '/BLOTTER';

/** The user owning `subject`: '' for `/TRADE` / `/BLOTTER` themselves, undefined when it is not private. */
export function privateOwner(subject: string): string | undefined {
  if (subject.startsWith(`${TRADE}/`)) return subject.slice(TRADE.length + 1).split('/', 1)[0]!;
  if (subject.startsWith(`${BLOTTER}/`)) return subject.slice(BLOTTER.length + 1);
  return subject === TRADE || subject === BLOTTER ? '' : undefined;
}

/**
 * Why a session of `user` may not read `subject` (another user's trade record or blotter; the
 * engine's message), or undefined when it may.
 */
export function privateReadRefusal(user: string, subject: string): string | undefined {
  const owner = privateOwner(subject);
  if (owner === undefined || (owner !== '' && owner === user)) return undefined;
  return `'${subject}' is private to ${owner === '' ? 'no user' : 'another user'}; a session of user '${user}' may only read its own /TRADE/${user}/... and /BLOTTER/${user}`;
}
