import { Migration20261121000000Registry } from './control/Migration20261121000000Registry.js';
import { Migration20261127160000TenantSuspension } from './control/Migration20261127160000TenantSuspension.js';
import { Migration20261121000100Platform } from './tenant/Migration20261121000100Platform.js';
import { Migration20261121001000Editions } from './tenant/Migration20261121001000Editions.js';
import { Migration20261121002000Offers } from './tenant/Migration20261121002000Offers.js';
import { Migration20261121003000Families } from './tenant/Migration20261121003000Families.js';
import { Migration20261121004000Attendances } from './tenant/Migration20261121004000Attendances.js';
import { Migration20261121005000Money } from './tenant/Migration20261121005000Money.js';
import { Migration20261121006000Allocations } from './tenant/Migration20261121006000Allocations.js';
import { Migration20261124100000OutboxDelivery } from './tenant/Migration20261124100000OutboxDelivery.js';
import { Migration20261124150000Retention } from './tenant/Migration20261124150000Retention.js';
import { Migration20261124200813IdempotencyKeys } from './tenant/Migration20261124200813IdempotencyKeys.js';
import { Migration20261125000000Events } from './tenant/Migration20261125000000Events.js';
import { Migration20261125000100Webhooks } from './tenant/Migration20261125000100Webhooks.js';
import { Migration20261125000200AppendApplication } from './tenant/Migration20261125000200AppendApplication.js';
import { Migration20261125000300AllocationCommitRequested } from './tenant/Migration20261125000300AllocationCommitRequested.js';
import { Migration20261127100000FamilyApplications } from './tenant/Migration20261127100000FamilyApplications.js';
import { Migration20261127120100RunsCommitted } from './tenant/Migration20261127120100RunsCommitted.js';
import { Migration20261127120200WebhookSecrets } from './tenant/Migration20261127120200WebhookSecrets.js';
import { Migration20261127120300CalledOffCharges } from './tenant/Migration20261127120300CalledOffCharges.js';

// Explicit, ordered lists (no globbing at run time). Add new migrations at the end of their list.
export const controlMigrations = [
  { name: 'Migration20261121000000Registry', class: Migration20261121000000Registry },
  { name: 'Migration20261127160000TenantSuspension', class: Migration20261127160000TenantSuspension },
];

export const tenantMigrations = [
  { name: 'Migration20261121000100Platform', class: Migration20261121000100Platform },
  { name: 'Migration20261121001000Editions', class: Migration20261121001000Editions },
  { name: 'Migration20261121002000Offers', class: Migration20261121002000Offers },
  { name: 'Migration20261121003000Families', class: Migration20261121003000Families },
  { name: 'Migration20261121004000Attendances', class: Migration20261121004000Attendances },
  { name: 'Migration20261121005000Money', class: Migration20261121005000Money },
  { name: 'Migration20261121006000Allocations', class: Migration20261121006000Allocations },
  { name: 'Migration20261124100000OutboxDelivery', class: Migration20261124100000OutboxDelivery },
  { name: 'Migration20261124150000Retention', class: Migration20261124150000Retention },
  { name: 'Migration20261124200813IdempotencyKeys', class: Migration20261124200813IdempotencyKeys },
  { name: 'Migration20261125000000Events', class: Migration20261125000000Events },
  { name: 'Migration20261125000100Webhooks', class: Migration20261125000100Webhooks },
  { name: 'Migration20261125000200AppendApplication', class: Migration20261125000200AppendApplication },
  { name: 'Migration20261125000300AllocationCommitRequested', class: Migration20261125000300AllocationCommitRequested },
  { name: 'Migration20261127100000FamilyApplications', class: Migration20261127100000FamilyApplications },
  { name: 'Migration20261127120100RunsCommitted', class: Migration20261127120100RunsCommitted },
  { name: 'Migration20261127120200WebhookSecrets', class: Migration20261127120200WebhookSecrets },
  { name: 'Migration20261127120300CalledOffCharges', class: Migration20261127120300CalledOffCharges },
];
