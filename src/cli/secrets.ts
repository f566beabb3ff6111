import { expectPositionals, parseCommandArgs } from './args.js';
import { CommandError, UsageError } from './errors.js';
import { note, out } from './output.js';
import { withRuntime } from './runtime.js';

// `secrets rotate` (issue 22.12, docs/operations.md "Rotating SECRETS_KEY"): seals every stored secret (the
// webhooks' signing secrets, current and previous) again with the current SECRETS_KEY, opening each with
// whichever key sealed it (SECRETS_KEY or one in SECRETS_KEY_PREVIOUS; plain values stored before a key was
// set are sealed for the first time). One transaction per municipality; prints `<slug>\tresealed=<n>` per
// municipality. Secrets no configured key opens are left as they are, counted, and the command fails (exit 1).
const ROTATE = 'secrets rotate';

async function rotate(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs(ROTATE, args, {});
  expectPositionals(ROTATE, positionals, 0, 0);
  await withRuntime(async ({ db, config }) => {
    if (!config.secretsKey) throw new CommandError('SECRETS_KEY is not set: set the new key (and the old one in SECRETS_KEY_PREVIOUS) first');
    const [{ loadTenants }, { resealTenantSecrets }] = await Promise.all([
      import('../platform/tenancy/registry.js'), import('../platform/secrets/reseal.js'),
    ]);
    let unreadable = 0;
    for (const tenant of await loadTenants(db)) {
      const result = await resealTenantSecrets(db, tenant.schema);
      unreadable += result.unreadable;
      await out(`${tenant.slug}\tresealed=${result.resealed}${result.unreadable ? `\tunreadable=${result.unreadable}` : ''}`);
    }
    if (unreadable > 0) throw new CommandError(`${unreadable} secret(s) are sealed with a key that is neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS`);
    note('every stored secret is sealed with the current SECRETS_KEY; SECRETS_KEY_PREVIOUS can be removed');
  });
}

export async function secretsCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'rotate':
      return rotate(rest);
    case undefined:
      throw new UsageError(`secrets needs a subcommand: ${ROTATE}`);
    default:
      throw new UsageError(`unknown command "secrets ${sub}": use ${ROTATE}`);
  }
}
