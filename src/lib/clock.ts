/** Time source; injected wherever time matters so tests move time instead of sleeping. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/**
 * A clock that only moves when told to: what tests pass where time matters.
 * @internal
 */
export class ManualClock implements Clock {
  private current: number

  constructor(start: Date | string = new Date()) {
    this.current = new Date(start).getTime()
  }

  now(): Date {
    return new Date(this.current)
  }

  advance(ms: number): void {
    this.current += ms
  }

  set(to: Date | string): void {
    this.current = new Date(to).getTime()
  }
}

export const SECOND = 1000
export const MINUTE = 60 * SECOND
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR
