import { slugify } from '../domain/alias.js';
import { insertToken } from '../platform/auth/tokens.js';
import type { ServiceContext } from '../platform/context.js';
import { dbOf } from '../platform/context.js';
import { tenantDb } from '../platform/db/tenant.js';
import type { RawUpload } from '../platform/http/raw.js';
import { submitFamilyApplicationInput } from '../resources/attendances/family-schema.js';
import { submitFamilyApplication } from '../resources/attendances/family-submit.js';
import { uploadFile } from '../resources/files/service.js';
import { CITY, ZIP } from './content.js';

// Families who applied themselves through the municipality's website (issue 21, D11), made through the same
// use cases as POST /files and POST /family-applications with the demo website's token: two signed-in families
// whose website vouched for their address (decided at once; one answered a file question with a scan), one
// family that has not confirmed its address yet (`email_unconfirmed`, its mail in the outbox), and a teenager
// applying alone whose guardian has not consented yet (`consents_outstanding`).

const SCAN = Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n'
  + 'trailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1');

type Family = {
  firstname: string; lastname: string; street: string; verified: boolean;
  children: { firstname: string; dateOfBirth: string; guardianEmail?: string; offers: string[] }[];
};

const FAMILIES: Family[] = [
  { firstname: 'Julia', lastname: 'Wagner', street: 'Rosenweg 9', verified: true, children: [
    { firstname: 'Lotta', dateOfBirth: '2016-04-02', offers: ['Reiterferien auf dem Lindenhof', 'Pizza backen wie in Italien'] },
    { firstname: 'Finn', dateOfBirth: '2018-10-19', offers: ['Pizza backen wie in Italien'] },
  ] },
  { firstname: 'Andreas', lastname: 'Richter', street: 'Kirchgasse 4', verified: true, children: [
    { firstname: 'Ida', dateOfBirth: '2015-07-07', offers: ['Kanutour auf der Muster'] },
  ] },
  { firstname: 'Sandra', lastname: 'Fischer', street: 'Bergstraße 22', verified: false, children: [
    { firstname: 'Noah', dateOfBirth: '2017-02-11', offers: ['Pizza backen wie in Italien', 'Kanutour auf der Muster'] },
  ] },
  { firstname: 'Tim', lastname: 'Hoffmann', street: 'Am Wall 6', verified: true, children: [
    { firstname: 'Tim', dateOfBirth: '2013-05-30', guardianEmail: 'sabine.hoffmann@familie-hoffmann.example', offers: ['Floßbau am Mustersee'] },
  ] },
];

/** The families' applications; returns how many applications were made. */
export async function websiteFamilies(ctx: ServiceContext): Promise<number> {
  const { uuid: tokenId } = await insertToken(dbOf(ctx.em), ctx.tenant.schema, {
    name: 'Website Musterstadt (Demo)', role: 'website', access: 'read-write', ownerKind: 'service', organiserIds: [], expiresAt: null,
  });
  const website: ServiceContext = {
    ...ctx,
    viewer: { kind: 'website', actor: { tokenId, name: 'Website Musterstadt (Demo)', role: 'website', access: 'read-write', ownerKind: 'service', organiserIds: [] } },
  };
  const offers = await tenantDb(ctx).selectFrom('offers').select(['uuid', 'alias', 'application_questions as questions']).execute();
  const byName = (name: string) => offers.find((o) => o.alias === slugify(name))!;
  let made = 0;
  for (const f of FAMILIES) {
    const email = `${slugify(f.firstname)}.${slugify(f.lastname)}@familie-${slugify(f.lastname)}.example`;
    const participants = [];
    for (const c of f.children) {
      const wishes = [];
      for (const [i, name] of c.offers.entries()) {
        const offer = byName(name);
        const answers: Record<string, string | boolean> = {};
        for (const q of (offer.questions ?? []) as { uuid: string; type: string }[]) {
          if (q.type === 'yn') answers[q.uuid] = true;
          if (q.type === 'file') {
            const upload: RawUpload = { bytes: SCAN, mediaType: 'application/pdf', fileName: 'Einverstaendnis-Reitverein.pdf', digest: '' };
            answers[q.uuid] = (await uploadFile(website, upload)).uuid;
          }
        }
        wishes.push({ offer: offer.uuid, userPriority: i + 1, answers });
      }
      participants.push({ firstname: c.firstname, lastname: f.lastname, dateOfBirth: c.dateOfBirth, guardianEmail: c.guardianEmail, wishes });
    }
    const apps = await submitFamilyApplication(website, submitFamilyApplicationInput.parse({
      account: { email, firstname: f.firstname, lastname: f.lastname, street: f.street, zip: ZIP, city: CITY },
      emailVerified: f.verified, participants,
    }));
    made += apps.length;
  }
  return made;
}
