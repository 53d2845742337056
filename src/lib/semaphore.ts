/**
 * At most `limit` tasks run at once; the others wait in arrival order. No timeout: callers are
 * bounded upstream (rate limits), and a queued task costs a closure, not a thread.
 */
export class Semaphore {
  #running = 0
  readonly #waiting: (() => void)[] = []

  constructor(private limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('a semaphore needs a limit of at least 1')
  }

  /** Tasks running and tasks waiting, for tests and metrics. */
  get load(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length }
  }

  /** Changes the limit; waiting tasks start at once if the new limit allows. */
  resize(limit: number): void {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('a semaphore needs a limit of at least 1')
    this.limit = limit
    while (this.#running < this.limit && this.#waiting.length > 0) {
      this.#running++
      this.#waiting.shift()!()
    }
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running < this.limit) this.#running++
    else await new Promise<void>((resolve) => this.#waiting.push(resolve))
    try {
      return await task()
    } finally {
      const next = this.#waiting.shift()
      // The slot passes to the next task directly, so a newcomer cannot overtake the queue.
      if (next) next()
      else this.#running--
    }
  }
}
