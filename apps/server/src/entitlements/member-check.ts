/**
 * The member re-check of a config reload: a container's rows are its members, and a view shows
 * them to whoever may view the container, so every member must be subscribable by every user who
 * may view the container. `container.publish` checks that for the members it adds, against the
 * rules in force then; a reload that narrows the rules can break it for members added before.
 * findMemberDenials finds, for every container and every user whose rules grant the container,
 * the first member those rules no longer grant; the transport then closes such views and refuses
 * new ones until the next reload (auth-reload.ts, Entitlements.setMemberDenials).
 */

import type { ContainerMembersInfo } from '@tidewire/engine';
import type { UserEntry } from '../config.js';
import type { Entitlements, MemberDenials } from './entitlements.js';

/** One container and its members in natural order (the engine's `ContainerMembersInfo`). */
export type ContainerMembersList = ContainerMembersInfo;

/** Member checks done between two yields to the event loop in findMemberDenials. */
export const MEMBER_CHECKS_PER_SLICE = 20_000;

/** What findMemberDenials found and what it cost. */
export interface MemberCheckResult {
  /** container -> user -> first member the user may not subscribe to (only denied pairs). */
  denials: Map<string, Map<string, string>>;
  /** (user, container) pairs checked: users whose rules grant the container, once per container. */
  pairs: number;
  /** Member checks made (a denied pair stops at its first hidden member). */
  checks: number;
}

/**
 * For each container of `containers` and each of `users` whose rules (`entitlements.can`, so
 * without earlier member denials) grant `subscribe` on the container, the first member that user
 * may not subscribe to. A container listed twice is checked once (the first listing wins).
 * Yields to the event loop (`yieldNow`, default setImmediate) after about every
 * MEMBER_CHECKS_PER_SLICE checks, so a transport keeps streaming while 1,000,000 members are
 * checked; the loop is bounded by the members given times the users. Never rejects: the rules are
 * pure functions of their input.
 */
export async function findMemberDenials(
  entitlements: Entitlements,
  users: Iterable<UserEntry>,
  containers: readonly ContainerMembersList[],
  yieldNow: () => Promise<void> = () => new Promise((r) => setImmediate(r)),
): Promise<MemberCheckResult> {
  const viewersOf = [...users];
  const denials = new Map<string, Map<string, string>>();
  const seen = new Set<string>();
  let pairs = 0;
  let checks = 0;
  let sinceYield = 0;
  for (const { container, members } of containers) {
    if (seen.has(container) || members.length === 0) continue;
    seen.add(container);
    for (const user of viewersOf) {
      if (!entitlements.can(user, 'subscribe', container)) continue;
      pairs++;
      for (let i = 0; i < members.length; i++) {
        checks++;
        if (++sinceYield >= MEMBER_CHECKS_PER_SLICE) {
          sinceYield = 0;
          await yieldNow();
        }
        if (entitlements.can(user, 'subscribe', members[i]!)) continue;
        let byUser = denials.get(container);
        if (!byUser) denials.set(container, (byUser = new Map()));
        byUser.set(user.user, members[i]!);
        break;
      }
    }
  }
  return { denials, pairs, checks };
}

/** The NOT_ENTITLED message of a view closed because `member` of `container` is hidden from `user`. */
export function memberDeniedMessage(user: UserEntry, viewId: number, container: string, member: string): string {
  return `view ${viewId} of '${container}' closed: user '${user.user}' (role ${user.role}) may not subscribe to '${member}', a member of '${container}' (rules changed)`;
}

