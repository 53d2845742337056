/**
 * Loaded into a measured process (`--import` after tsx, see processes.ts) when the bench starts it
 * with an IPC channel: answers `{ id, cmd }` messages with the process's own figures, so that what
 * is measured is that process and not the bench. `usage`: memory, CPU time and the longest
 * event-loop delay since the previous answer (how long the loop was held at once); `gc`: a full
 * collection first (heap used is then what is retained, not what awaits collection); `snapshot`:
 * `v8.writeHeapSnapshot(path)`. Without an IPC channel it does nothing.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8'
import { runInNewContext } from 'node:vm'

interface Request {
  id: number
  cmd: 'usage' | 'gc' | 'snapshot'
  path?: string
}

if (process.send) {
  // Exposes gc() to this module only: the flag is set, read by a fresh context, then unset.
  setFlagsFromString('--expose-gc')
  const collect = runInNewContext('gc') as () => void
  setFlagsFromString('--no-expose-gc')
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  const answer = (request: Request) => {
    if (request.cmd === 'gc') collect()
    if (request.cmd === 'snapshot') return { path: writeHeapSnapshot(request.path) }
    const loopDelayMaxMs = delay.max / 1e6
    delay.reset()
    return { memory: process.memoryUsage(), cpu: process.cpuUsage(), uptime: process.uptime(), loopDelayMaxMs }
  }
  process.on('message', (request: Request) => {
    if (typeof request?.id !== 'number' || !request.cmd) return
    process.send!({ probe: request.id, ...answer(request) })
  })
  // The channel must not keep the process alive once its own work ends.
  process.channel?.unref()
}
