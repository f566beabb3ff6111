import { describe, expect, it } from 'vitest';
import type { Actor } from '../../src/platform/auth/tokens.js';
import { ANONYMOUS, roleOf, systemViewer, viewerOfActor, type Viewer } from '../../src/platform/auth/viewer.js';
import {
  assertMayChangeOffer, assertMayHost, offerReaderRole, offerStanding, ownsOffer, seesApplicantNames,
} from '../../src/engines/access/index.js';

// Issue 15: one viewer per request or job, and access rules that deny what they do not know. The HTTP
// behaviour is held by the isolation matrix (test/security/isolation.test.ts); these are the pure answers.
const actor = (over: Partial<Actor>): Actor => ({
  tokenId: '00000000-0000-4000-8000-0000000000a1', name: 'Test', role: 'admin', access: 'read-write', ownerKind: 'service',
  organiserIds: [], ...over,
});
const own = '00000000-0000-4000-8000-0000000000b1';
const other = '00000000-0000-4000-8000-0000000000b2';
const admin = viewerOfActor(actor({}));
const organiser = viewerOfActor(actor({ role: 'organiser', organiserIds: [own] }));
const legacy = viewerOfActor(actor({ access: 'legacy' }));
const system = systemViewer('test');
/** A kind no rule knows (a future one, or a value smuggled past the types). */
const unknown = { kind: 'stranger' } as unknown as Viewer;

describe('the viewer of a request', () => {
  it('is built from the token, and is anonymous without one', () => {
    expect(viewerOfActor(null)).toBe(ANONYMOUS);
    expect(admin.kind).toBe('admin');
    expect(organiser).toMatchObject({ kind: 'organiser', organiserIds: [own] });
    expect(legacy.kind).toBe('legacy');
    expect(viewerOfActor(actor({ role: 'organiser', access: 'legacy' })).kind).toBe('legacy');
  });

  it('names a role only for admins and organisers', () => {
    expect([admin, organiser, legacy, ANONYMOUS, system].map(roleOf)).toEqual(['admin', 'organiser', null, null, null]);
  });
});

describe('offers', () => {
  const published = { hosts: [other], published: true };
  const draft = { hosts: [other], published: false };
  const mine = { hosts: [own], published: false };

  it('admins and the system change any offer; organisers their own; the rest none', () => {
    expect([admin, system].map((v) => offerStanding(v, draft))).toEqual(['admin', 'admin']);
    expect([mine, published, draft].map((o) => offerStanding(organiser, o))).toEqual(['own', 'foreign', 'hidden']);
    for (const v of [ANONYMOUS, legacy, unknown]) expect(offerStanding(v, published)).toBe('hidden');
    expect(() => assertMayChangeOffer(organiser, 'x', published)).toThrow(/own organisers/);
    expect(() => assertMayChangeOffer(unknown, 'x', published)).toThrow(/No offer/);
    expect(() => assertMayChangeOffer(organiser, 'x', mine)).not.toThrow();
  });

  it('reads internal fields only as admin or organiser', () => {
    expect([admin, system, organiser, ANONYMOUS, legacy, unknown].map(offerReaderRole))
      .toEqual(['admin', 'admin', 'organiser', null, null, null]);
    expect(ownsOffer(organiser, [other, own])).toBe(true);
    expect(ownsOffer(admin, [own])).toBe(false);
  });

  it('hosts: organisers name only their own, anyone unknown none', () => {
    expect(() => assertMayHost(admin, [])).not.toThrow();
    expect(() => assertMayHost(organiser, [own])).not.toThrow();
    expect(() => assertMayHost(organiser, [])).toThrow();
    expect(() => assertMayHost(organiser, [own, other])).toThrow();
    for (const v of [ANONYMOUS, legacy, unknown]) expect(() => assertMayHost(v, [own])).toThrow();
  });
});

describe('applications', () => {
  it('names: admins and the system always, organisers for told decisions, anyone else never', () => {
    const told = { status: 'confirmed' as const, heldBack: false };
    const heldBack = { status: 'confirmed' as const, heldBack: true };
    expect([admin, system].map((v) => seesApplicantNames(v, heldBack))).toEqual([true, true]);
    expect(seesApplicantNames(organiser, told)).toBe(true);
    expect(seesApplicantNames(organiser, heldBack)).toBe(false);
    for (const v of [ANONYMOUS, legacy, unknown]) expect(seesApplicantNames(v, told)).toBe(false);
  });
});
