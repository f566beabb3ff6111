import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';
import { SLUG_RE } from '../platform/tenancy/tenant.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `util.parseArgs` in strict mode; its errors become usage errors naming the command. */
export function parseCommandArgs<O extends Options>(command: string, args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(`${command}: ${message.replace(/\. To specify a positional argument.*$/, '')}`);
  }
}

/** Exactly `min`..`max` positionals, else a usage error showing the command's synopsis. */
export function expectPositionals(synopsis: string, positionals: string[], min: number, max: number): void {
  if (positionals.length < min) throw new UsageError(`missing argument: usage: ${synopsis}`);
  if (positionals.length > max) throw new UsageError(`unexpected argument "${positionals[max]}": usage: ${synopsis}`);
}

export function expectSlug(slug: string): string {
  if (!SLUG_RE.test(slug)) throw new UsageError(`invalid tenant slug "${slug}": use [a-z][a-z0-9-]{1,40}`);
  return slug;
}

/** Runs a parser of the platform and turns what it throws into a usage error. */
export function asUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}
