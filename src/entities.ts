import { Category } from './resources/categories/entity.js';
import { Organiser } from './resources/organisers/entity.js';
import { Edition, EditionTask } from './resources/editions/entity.js';
import { Offer, OfferDate } from './resources/offers/entity.js';
import { Account } from './resources/accounts/entity.js';
import { Participant } from './resources/participants/entity.js';
import { Attendance } from './resources/attendances/entity.js';

// Every tenant entity, declared with the wildcard schema; a request's fork binds the tenant's schema.
export const entities = [Category, Organiser, Edition, EditionTask, Offer, OfferDate, Account, Participant, Attendance];
