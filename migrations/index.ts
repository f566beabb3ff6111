import { Migration20261121000000Registry } from './control/Migration20261121000000Registry.js';
import { Migration20261121000100Platform } from './tenant/Migration20261121000100Platform.js';

// Explicit, ordered lists (no globbing at run time). Add new migrations at the end of their list.
export const controlMigrations = [
  { name: 'Migration20261121000000Registry', class: Migration20261121000000Registry },
];

export const tenantMigrations = [
  { name: 'Migration20261121000100Platform', class: Migration20261121000100Platform },
];
