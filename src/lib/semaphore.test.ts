import { describe, expect, it } from 'vitest'
import { Semaphore } from './semaphore.ts'

/** A task the test finishes by hand. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { open, opened }
}

describe('Semaphore', () => {
  it('runs at most `limit` tasks at once and starts the waiting ones in arrival order', async () => {
    const semaphore = new Semaphore(2)
    const gates = [gate(), gate(), gate(), gate()]
    const started: number[] = []
    const runs = gates.map((item, index) =>
      semaphore.run(async () => {
        started.push(index)
        await item.opened
        return index
      }),
    )
    await Promise.resolve()
    expect(started).toEqual([0, 1])
    expect(semaphore.load).toEqual({ running: 2, waiting: 2 })
    gates[1]!.open()
    await runs[1]
    await Promise.resolve()
    expect(started).toEqual([0, 1, 2])
    for (const item of gates) item.open()
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3])
    expect(semaphore.load).toEqual({ running: 0, waiting: 0 })
  })

  it('frees the slot when a task fails', async () => {
    const semaphore = new Semaphore(1)
    await expect(semaphore.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await semaphore.run(() => Promise.resolve('next'))).toBe('next')
    expect(semaphore.load).toEqual({ running: 0, waiting: 0 })
  })

  it('starts waiting tasks when the limit grows, and refuses a limit below one', async () => {
    const semaphore = new Semaphore(1)
    const first = gate()
    const second = gate()
    const started: string[] = []
    const runs = [
      semaphore.run(async () => {
        started.push('a')
        await first.opened
      }),
      semaphore.run(async () => {
        started.push('b')
        await second.opened
      }),
    ]
    await Promise.resolve()
    expect(started).toEqual(['a'])
    semaphore.resize(2)
    await Promise.resolve()
    expect(started).toEqual(['a', 'b'])
    first.open()
    second.open()
    await Promise.all(runs)
    expect(() => semaphore.resize(0)).toThrow(RangeError)
    expect(() => new Semaphore(1.5)).toThrow(RangeError)
  })
})
