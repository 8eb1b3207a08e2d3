import { describe, expect, it } from 'vitest';
import { startTour, tourKey, tourReducer, type TourAction, type TourPosition } from '../../src/tour/machine.js';

const run = (count: number, ...actions: TourAction[]): TourPosition => actions.reduce(tourReducer, startTour(count));
const next = { type: 'next' } as const;
const prev = { type: 'prev' } as const;
const explore = { type: 'explore' } as const;
const resume = { type: 'resume' } as const;

describe('tourReducer', () => {
  it('moves forward and back one step at a time, each move asking for the step to be shown again', () => {
    expect(run(3, next)).toMatchObject({ index: 1, epoch: 1 });
    expect(run(3, next, next, prev)).toMatchObject({ index: 1, epoch: 3 });
  });

  it('stays on the last step with n and on the first with p, without re-showing it', () => {
    const end = run(2, next);
    expect(tourReducer(end, next)).toBe(end);
    const start = startTour(2);
    expect(tourReducer(start, prev)).toBe(start);
  });

  it('marks exploring without re-showing, and . (resume) brings the step back', () => {
    const wandering = run(3, next, explore);
    expect(wandering).toMatchObject({ index: 1, exploring: true, epoch: 1 });
    expect(tourReducer(wandering, explore)).toBe(wandering);
    expect(tourReducer(wandering, resume)).toMatchObject({ index: 1, exploring: false, epoch: 2 });
  });

  it('n on the last step while exploring returns to that step', () => {
    const p = run(2, next, explore, next);
    expect(p).toMatchObject({ index: 1, exploring: false, epoch: 2 });
  });

  it('clamps goto to the steps there are', () => {
    expect(run(4, { type: 'goto', index: 99 }).index).toBe(3);
    expect(run(4, { type: 'goto', index: -2 }).index).toBe(0);
  });

  it('treats a tour without steps as one step (never an index out of range)', () => {
    expect(run(0, next, next)).toMatchObject({ index: 0, count: 1 });
  });
});

describe('tourKey', () => {
  it.each([
    ['n', 'next'],
    ['p', 'prev'],
    ['.', 'resume'],
  ])('%s is the tour key %s', (key, type) => {
    expect(tourKey(key)).toEqual({ type });
  });
  it.each(['j', 'k', 'q', '\r', 'N', ''])('%j is not a tour key', (key) => {
    expect(tourKey(key)).toBeNull();
  });
});
