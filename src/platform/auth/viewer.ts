import type { Actor } from './tokens.js';

// Who is asking, decided once: at the edge for a request (from the authenticated token), where a job or
// command starts for background work. Every use case reads it from its context; what each kind may see and
// change is answered in one place, src/engines/access/. No kind grants by being absent: a context must
// name its viewer, and the access rules deny what they do not know.

export type Viewer =
  | { kind: 'admin'; actor: Actor }
  | { kind: 'organiser'; actor: Actor; organiserIds: readonly string[] }
  /** No token, while the tenant's publicAccess is on (spec 5). */
  | { kind: 'anonymous' }
  /** A token with the scope api:offer:read (D3): the public offer endpoints only, seen as the public sees them. */
  | { kind: 'legacy'; actor: Actor }
  /**
   * The municipality's public website (D11): reads what anonymous callers read (also while publicAccess is off)
   * and hands in family applications, their confirmations and consents, and answer files.
   */
  | { kind: 'website'; actor: Actor }
  /** The service itself: background jobs (D9), the CLI, the demo data. Acts with an admin's rights. */
  | { kind: 'system'; name: string };

export const ANONYMOUS: Viewer = { kind: 'anonymous' };

export function systemViewer(name: string): Viewer {
  return { kind: 'system', name };
}

/** The viewer of a request: its token's actor, or anonymous without one. */
export function viewerOfActor(actor: Actor | null): Viewer {
  if (!actor) return ANONYMOUS;
  if (actor.access === 'legacy') return { kind: 'legacy', actor };
  if (actor.role === 'admin') return { kind: 'admin', actor };
  if (actor.role === 'organiser') return { kind: 'organiser', actor, organiserIds: actor.organiserIds };
  if (actor.role === 'website') return { kind: 'website', actor };
  // A role this code does not know reads like no token at all.
  return ANONYMOUS;
}

/** The role a recorded decision names ("confirmed beyond capacity by …"); null for the rest, which that text reads as an admin. */
export function roleOf(viewer: Viewer): 'admin' | 'organiser' | null {
  if (viewer.kind === 'organiser') return 'organiser';
  if (viewer.kind === 'admin') return 'admin';
  return null;
}
