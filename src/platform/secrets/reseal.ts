import { inSchema, type Executor } from '../db/sql.js';
import { resealSecret, SecretUnreadable } from './box.js';

type Stored = { secret: string; until: string };

/**
 * Seals every stored secret of one municipality again with the current SECRETS_KEY (`cli secrets rotate`), in
 * one transaction, the webhooks locked while they are rewritten. Counts what it resealed and what no
 * configured key opens (left as it is).
 */
export async function resealTenantSecrets(db: Executor, schema: string): Promise<{ resealed: number; unreadable: number }> {
  return db.transaction().execute(async (trx) => {
    const tx = inSchema(trx, schema);
    const rows = await tx.selectFrom('webhooks').select(['uuid', 'secret', 'previous_secrets']).orderBy('uuid').forUpdate().execute();
    let resealed = 0;
    let unreadable = 0;
    const again = (stored: string): string | null => {
      try {
        const next = resealSecret(stored);
        if (next !== null) resealed++;
        return next;
      } catch (err) {
        if (!(err instanceof SecretUnreadable)) throw err;
        unreadable++;
        return null;
      }
    };
    for (const row of rows) {
      const secret = again(row.secret);
      const previous = (row.previous_secrets as Stored[]).map((p) => ({ ...p, secret: again(p.secret) ?? p.secret }));
      const changedPrevious = previous.some((p, i) => p.secret !== (row.previous_secrets as Stored[])[i]!.secret);
      if (secret === null && !changedPrevious) continue;
      await tx.updateTable('webhooks').set({ secret: secret ?? row.secret, previous_secrets: JSON.stringify(previous) })
        .where('uuid', '=', row.uuid).execute();
    }
    return { resealed, unreadable };
  });
}
