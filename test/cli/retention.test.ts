import { beforeAll, describe, expect, inject, it } from 'vitest';
import { useHarness, type Schema } from '../harness/harness.js';
import { runCliLines } from '../harness/processes.js';
import { apply, createAccount, createParticipant, offerEndedWeeksAgo, participantRow } from '../resources/retention/helpers.js';

// `retention run <slug> [--dry-run]` (D9, issue 9) as an operator runs it: the real entry point in a child process
// against this run's database. Output: uuids only, a summary line last; errors on stderr with a non-zero exit.
const cli = (args: string[]) => runCliLines(args, { DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'info' });

const SLOW = 120_000;
let due: Schema<'Participant'>;
let family: Schema<'Account'>;
let living: Schema<'Participant'>;

const { h, t } = useHarness();
beforeAll(async () => {
  const old = await offerEndedWeeksAgo(t, 13);
  const recent = await offerEndedWeeksAgo(t, 11);
  family = await createAccount(t, { firstname: 'Geheim', lastname: 'Familienname' });
  due = await createParticipant(t, { account: family.uuid, firstname: 'Geheimer', lastname: 'Kindername' });
  await apply(t, old.uuid, due.uuid);
  living = await createParticipant(t);
  await apply(t, recent.uuid, living.uuid);
});

describe('retention run', () => {
  it('--dry-run prints the uuids due and the counts, and changes nothing; then the run does it; again: nothing', async () => {
    const dry = await cli(['retention', 'run', t.slug, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.lines).toEqual([
      `participant\t${due.uuid}`,
      `account\t${family.uuid}`,
      `${t.slug}\tdry-run\tparticipants=1\taccounts=1\tapplications=1`,
    ]);
    expect(dry.stderr).toMatch(/nothing was changed/);
    expect((await participantRow(h, t, due.uuid)).pseudonymised_at).toBeNull();

    const run = await cli(['retention', 'run', t.slug]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines).toEqual([
      `participant\t${due.uuid}`,
      `account\t${family.uuid}`,
      `${t.slug}\tdone\tparticipants=1\taccounts=1\tapplications=1`,
    ]);
    expect((await participantRow(h, t, due.uuid)).pseudonymised_at).not.toBeNull();
    expect((await participantRow(h, t, living.uuid)).pseudonymised_at).toBeNull();
    // The log line has counts, never a name, an address or the uuids.
    for (const secret of ['Geheim', 'Familienname', 'Kindername', family.email, due.uuid]) expect(run.stderr).not.toContain(secret);
    expect(run.stderr).toMatch(/"participants":1/);

    const again = await cli(['retention', 'run', t.slug]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.lines).toEqual([`${t.slug}\tdone\tparticipants=0\taccounts=0\tapplications=0`]);
  }, SLOW);

  it('bad input: a clear message on stderr and a non-zero exit', async () => {
    const [unknown, badSlug, missing, noSub, badSub, badFlag] = await Promise.all([
      cli(['retention', 'run', 'no-such-tenant']),
      cli(['retention', 'run', 'Bad_Slug']),
      cli(['retention', 'run']),
      cli(['retention']),
      cli(['retention', 'purge', t.slug]),
      cli(['retention', 'run', t.slug, '--force']),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: no tenant "no-such-tenant"/m);
    for (const r of [badSlug, missing, noSub, badSub, badFlag]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: /);
    }
    expect(badSlug.stderr).toMatch(/invalid tenant slug/);
    expect(missing.stderr).toMatch(/retention run <slug> \[--dry-run\]/);
    expect(badSub.stderr).toMatch(/unknown command "retention purge"/);
    expect(badFlag.stderr).toMatch(/--force/);
  }, SLOW);

  it('is in the usage', async () => {
    const help = await cli(['--help']);
    expect(help.stdout).toContain('retention run <slug> [--dry-run]');
  }, SLOW);
});
