import { describe, expect, it } from 'vitest';
import {
  applicationLimit, effectiveEditionState, exceedsApplicationLimit, governingApplicationTask, isTaskRunning,
  type EditionState, type PhaseTask, type Procedure, type TaskType,
} from '../../src/domain/edition-phases.js';

const d = (s: string) => new Date(`${s}T12:00:00+02:00`);
const task = (type: TaskType, begin: string | null, end: string | null, applicationSystem: Procedure | null = null): PhaseTask => ({
  type, begin: begin === null ? null : d(begin), end: end === null ? null : d(end), applicationSystem,
});

const flags = (online: boolean, releaseParticipantLists: boolean, procedure: Procedure): EditionState => ({ online, releaseParticipantLists, procedure });

describe('isTaskRunning', () => {
  it.each([
    // begin, end, now, expected
    ['2027-06-01', '2027-06-30', '2027-06-15', true],
    ['2027-06-01', '2027-06-30', '2027-06-01', true], // begin included
    ['2027-06-01', '2027-06-30', '2027-06-30', true], // end included
    ['2027-06-01', '2027-06-30', '2027-05-31', false],
    ['2027-06-01', '2027-06-30', '2027-07-01', false],
    [null, '2027-06-30', '1990-01-01', true], // open start
    ['2027-06-01', null, '2099-01-01', true], // open end
    [null, null, '2027-06-15', true],
  ] as const)('%s..%s at %s -> %s', (begin, end, now, expected) => {
    expect(isTaskRunning(task('custom', begin, end), d(now))).toBe(expected);
  });

  it('includes the exact instants of begin and end', () => {
    const t = { begin: new Date('2027-06-01T00:00:00Z'), end: new Date('2027-06-01T10:00:00Z') };
    expect(isTaskRunning(t, new Date('2027-06-01T00:00:00Z'))).toBe(true);
    expect(isTaskRunning(t, new Date('2027-06-01T10:00:00Z'))).toBe(true);
    expect(isTaskRunning(t, new Date('2027-06-01T10:00:00.001Z'))).toBe(false);
    expect(isTaskRunning(t, new Date('2027-05-31T23:59:59.999Z'))).toBe(false);
  });
});

describe('effectiveEditionState (D4)', () => {
  const cases: { name: string; stored: EditionState; tasks: PhaseTask[]; now: string; expected: EditionState }[] = [
    { name: 'no tasks: the stored flags', stored: flags(true, false, 'firstcome'), tasks: [], now: '2027-06-15', expected: flags(true, false, 'firstcome') },
    { name: 'no tasks: other stored flags', stored: flags(false, true, 'lot'), tasks: [], now: '2027-06-15', expected: flags(false, true, 'lot') },
    {
      name: 'tasks of other types do not govern',
      stored: flags(false, true, 'lot'),
      tasks: [task('holiday', '2027-07-01', '2027-08-15'), task('pay_days', '2027-06-01', '2027-06-30'), task('allocation', '2027-06-10', '2027-06-20', 'firstcome'), task('custom', null, null)],
      now: '2027-06-15',
      expected: flags(false, true, 'lot'),
    },
    // show_offers governs online
    { name: 'show_offers running: online although the flag is off', stored: flags(false, false, 'firstcome'), tasks: [task('show_offers', '2027-05-01', '2027-08-31')], now: '2027-06-15', expected: flags(true, false, 'firstcome') },
    { name: 'show_offers not begun: offline although the flag is on', stored: flags(true, false, 'firstcome'), tasks: [task('show_offers', '2027-05-01', '2027-08-31')], now: '2027-04-30', expected: flags(false, false, 'firstcome') },
    { name: 'show_offers ended: offline', stored: flags(true, false, 'firstcome'), tasks: [task('show_offers', '2027-05-01', '2027-08-31')], now: '2027-09-01', expected: flags(false, false, 'firstcome') },
    { name: 'between two show_offers windows: offline', stored: flags(true, false, 'firstcome'), tasks: [task('show_offers', '2027-05-01', '2027-05-31'), task('show_offers', '2027-07-01', '2027-07-31')], now: '2027-06-15', expected: flags(false, false, 'firstcome') },
    { name: 'in the second show_offers window: online', stored: flags(false, false, 'firstcome'), tasks: [task('show_offers', '2027-05-01', '2027-05-31'), task('show_offers', '2027-07-01', '2027-07-31')], now: '2027-07-15', expected: flags(true, false, 'firstcome') },
    { name: 'show_offers without dates: always online', stored: flags(false, false, 'firstcome'), tasks: [task('show_offers', null, null)], now: '2027-06-15', expected: flags(true, false, 'firstcome') },
    { name: 'show_offers without an end: online from its begin on', stored: flags(false, false, 'firstcome'), tasks: [task('show_offers', '2027-05-01', null)], now: '2030-01-01', expected: flags(true, false, 'firstcome') },
    // publish_lists governs the release of lists
    { name: 'publish_lists running: released', stored: flags(true, false, 'firstcome'), tasks: [task('publish_lists', '2027-07-01', '2027-08-31')], now: '2027-07-01', expected: flags(true, true, 'firstcome') },
    { name: 'publish_lists not begun: not released although the flag is on', stored: flags(true, true, 'firstcome'), tasks: [task('publish_lists', '2027-07-01', '2027-08-31')], now: '2027-06-30', expected: flags(true, false, 'firstcome') },
    { name: 'publish_lists ended: not released', stored: flags(true, true, 'firstcome'), tasks: [task('publish_lists', '2027-07-01', '2027-08-31')], now: '2027-09-30', expected: flags(true, false, 'firstcome') },
    // application_system governs the procedure
    { name: 'running lot phase on a firstcome edition', stored: flags(true, false, 'firstcome'), tasks: [task('application_system', '2027-05-01', '2027-05-31', 'lot')], now: '2027-05-15', expected: flags(true, false, 'lot') },
    { name: 'before the first application phase: its procedure', stored: flags(true, false, 'firstcome'), tasks: [task('application_system', '2027-05-01', '2027-05-31', 'lot')], now: '2027-04-01', expected: flags(true, false, 'lot') },
    { name: 'after the lot phase (while drawing): still lot', stored: flags(true, false, 'firstcome'), tasks: [task('application_system', '2027-05-01', '2027-05-31', 'lot')], now: '2027-06-05', expected: flags(true, false, 'lot') },
    {
      name: 'lot phase, then first come: the running one',
      stored: flags(true, false, 'lot'),
      tasks: [task('application_system', '2027-05-01', '2027-05-31', 'lot'), task('application_system', '2027-06-10', '2027-08-31', 'firstcome')],
      now: '2027-06-15',
      expected: flags(true, false, 'firstcome'),
    },
    {
      name: 'between lot phase and first-come phase: the one that ended last',
      stored: flags(true, false, 'firstcome'),
      tasks: [task('application_system', '2027-06-10', '2027-08-31', 'firstcome'), task('application_system', '2027-05-01', '2027-05-31', 'lot')],
      now: '2027-06-05',
      expected: flags(true, false, 'lot'),
    },
    {
      name: 'overlapping phases: the later begun running one',
      stored: flags(true, false, 'firstcome'),
      tasks: [task('application_system', '2027-05-01', '2027-06-30', 'firstcome'), task('application_system', '2027-06-01', '2027-06-10', 'lot')],
      now: '2027-06-05',
      expected: flags(true, false, 'lot'),
    },
    {
      name: 'overlap: the long phase again after the short one ended',
      stored: flags(true, false, 'lot'),
      tasks: [task('application_system', '2027-05-01', '2027-06-30', 'firstcome'), task('application_system', '2027-06-01', '2027-06-10', 'lot')],
      now: '2027-06-20',
      expected: flags(true, false, 'firstcome'),
    },
    { name: 'application phase without a system: the stored procedure', stored: flags(true, false, 'lot'), tasks: [task('application_system', '2027-05-01', '2027-05-31', null)], now: '2027-05-15', expected: flags(true, false, 'lot') },
    // all three together
    {
      name: 'a whole season, during the lot phase',
      stored: flags(false, false, 'firstcome'),
      tasks: [
        task('show_offers', '2027-04-15', '2027-08-31'),
        task('application_system', '2027-05-01', '2027-05-20', 'lot'),
        task('allocation', '2027-05-21', '2027-05-25'),
        task('application_system', '2027-06-01', '2027-08-15', 'firstcome'),
        task('publish_lists', '2027-07-01', '2027-08-31'),
        task('holiday', '2027-07-01', '2027-08-15'),
      ],
      now: '2027-05-10',
      expected: flags(true, false, 'lot'),
    },
    {
      name: 'a whole season, in the holidays',
      stored: flags(false, false, 'lot'),
      tasks: [
        task('show_offers', '2027-04-15', '2027-08-31'),
        task('application_system', '2027-05-01', '2027-05-20', 'lot'),
        task('application_system', '2027-06-01', '2027-08-15', 'firstcome'),
        task('publish_lists', '2027-07-01', '2027-08-31'),
      ],
      now: '2027-07-10',
      expected: flags(true, true, 'firstcome'),
    },
    {
      name: 'a whole season, after it',
      stored: flags(true, true, 'lot'),
      tasks: [
        task('show_offers', '2027-04-15', '2027-08-31'),
        task('application_system', '2027-06-01', '2027-08-15', 'firstcome'),
        task('publish_lists', '2027-07-01', '2027-08-31'),
      ],
      now: '2027-10-01',
      expected: flags(false, false, 'firstcome'),
    },
  ];

  it.each(cases)('$name', ({ stored, tasks, now, expected }) => {
    expect(effectiveEditionState({ ...stored, tasks }, d(now))).toEqual(expected);
  });

  it('does not depend on the order of the tasks except for exact ties', () => {
    const tasks = cases.find((c) => c.name === 'a whole season, during the lot phase')!.tasks;
    const reversed = [...tasks].reverse();
    for (const now of ['2027-04-01', '2027-05-10', '2027-05-22', '2027-06-15', '2027-07-10', '2027-09-15']) {
      const base = { online: false, releaseParticipantLists: false, procedure: 'firstcome' as const };
      expect(effectiveEditionState({ ...base, tasks: reversed }, d(now))).toEqual(effectiveEditionState({ ...base, tasks }, d(now)));
    }
  });

  it('picks the later task in the list on an exact tie', () => {
    const a = task('application_system', '2027-05-01', '2027-05-31', 'lot');
    const b = task('application_system', '2027-05-01', '2027-05-31', 'firstcome');
    expect(governingApplicationTask([a, b], d('2027-05-10'))).toBe(b);
    expect(governingApplicationTask([b, a], d('2027-05-10'))).toBe(a);
    expect(governingApplicationTask([task('show_offers', null, null)], d('2027-05-10'))).toBeNull();
  });
});

describe('maxApplications (D4, issue 13)', () => {
  const phase = (begin: string | null, end: string | null, maxApplications: number | null) => ({ ...task('application_system', begin, end, 'firstcome'), maxApplications });

  it('is the running application phase\'s limit, none outside every phase', () => {
    const tasks = [phase('2027-05-01', '2027-05-31', 3), phase('2027-06-01', '2027-06-30', 5), { ...task('show_offers', null, null), maxApplications: 1 }];
    expect(applicationLimit(tasks, d('2027-05-10'))).toBe(3);
    expect(applicationLimit(tasks, d('2027-06-10'))).toBe(5);
    expect(applicationLimit(tasks, d('2027-04-10'))).toBeNull();
    expect(applicationLimit(tasks, d('2027-07-10'))).toBeNull();
    expect(applicationLimit([phase(null, null, null)], d('2027-07-10'))).toBeNull();
    expect(applicationLimit([], d('2027-07-10'))).toBeNull();
  });

  it('takes the latest begun of overlapping phases', () => {
    expect(applicationLimit([phase('2027-05-01', '2027-06-30', 2), phase('2027-06-01', '2027-06-30', 4)], d('2027-06-10'))).toBe(4);
  });

  it('refuses one more application at the limit', () => {
    expect(exceedsApplicationLimit(null, 100)).toBe(false);
    expect(exceedsApplicationLimit(2, 1)).toBe(false);
    expect(exceedsApplicationLimit(2, 2)).toBe(true);
    expect(exceedsApplicationLimit(0, 0)).toBe(true);
  });
});
