import { procedure, router } from '../../platform/http/trpc.js';
import { confirmationTokenInput, submitFamilyApplicationInput } from './family-schema.js';
import { attendanceListResponse } from './schema.js';
import { submitFamilyApplication } from './family-submit.js';
import { confirmFamilyEmail, giveConsent } from './family-confirm.js';

const tags = ['family-applications'];

// D11, issue 21: the municipality's website hands in a family's application, and later the family's
// confirmation of its address and a guardian's consent (each the token of its mail's link). Website tokens only.
export const familyApplicationsRouter = router({
  submit: procedure
    .meta({
      access: 'write', roles: ['website'], successStatus: 201,
      openapi: {
        method: 'POST', path: '/family-applications', tags, summary: 'A family applies through the website',
        description: 'One request per family: the guardian\'s account, the children and each child\'s wishes. All or nothing: one refused wish refuses the request (422, each violation naming `participants[i].wishes[j]…`); an application the child has for an offer already is 409. Answers 201 with the applications made (`createdByAdmin: false`): `email_unconfirmed` until the family confirms its address through the mailed link (unless `emailVerified`), `consents_outstanding` (and `consentOutstanding`) while a guardian named in `guardianEmail` has not consented; then the edition\'s procedure decides. Unconfirmed applications hold no place and expire after 72 hours.',
      },
    })
    .input(submitFamilyApplicationInput).output(attendanceListResponse)
    .mutation(({ ctx, input }) => submitFamilyApplication(ctx, input)),
  confirm: procedure
    .meta({
      access: 'write', roles: ['website'],
      openapi: {
        method: 'POST', path: '/family-applications/confirm', tags, summary: 'The family confirms its e-mail address',
        description: 'With the token of the confirmation mail\'s link (tenant setting `confirmationUrlTemplate`). Its applications leave `email_unconfirmed`: to `consents_outstanding` while a consent is missing, else the edition\'s procedure decides now (first come first served: in the order of confirmation). Answers the applications. A token that is unknown, expired (72 h) or used: 404, one answer for all.',
      },
    })
    .input(confirmationTokenInput).output(attendanceListResponse)
    .mutation(({ ctx, input }) => confirmFamilyEmail(ctx, input.token)),
  consent: procedure
    .meta({
      access: 'write', roles: ['website'],
      openapi: {
        method: 'POST', path: '/family-applications/consent', tags, summary: 'A guardian consents',
        description: 'With the token of the consent mail\'s link (tenant setting `consentUrlTemplate`). The child\'s applications lose `consentOutstanding`; those whose address is confirmed leave `consents_outstanding` and the edition\'s procedure decides. Answers the child\'s applications. A token that is unknown, expired (72 h) or used: 404, one answer for all.',
      },
    })
    .input(confirmationTokenInput).output(attendanceListResponse)
    .mutation(({ ctx, input }) => giveConsent(ctx, input.token)),
});
