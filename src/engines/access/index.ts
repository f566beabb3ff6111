// Who may see and change what (spec 4.2, 4.3, 5; D2, D3, D5): the one entry of the access rules. The viewer
// itself is built once per request or job (src/platform/auth/viewer.ts) and carried by the ServiceContext.
export type { Viewer } from '../../platform/auth/viewer.js';
export {
  assertMayChangeOffer, assertMayHost, offerNotFound, offerReaderRole, offerStanding, offerVisibleSql, ownsOffer,
  type OfferStanding,
} from './offers.js';
export { assertListEditable, assertListReadable, assertMayTransfer, loadOfferInfo, type OfferInfo } from './lists.js';
export { seesApplicantNames } from './applications.js';
