/**
 * Imported into a measured process (bench/instructions.ts): on SIGWINCH (a signal the server
 * does not take to mean "close", as it does SIGUSR2) it runs a full garbage
 * collection (`--expose-gc`) and prints `collected`, so that what the warm-up left behind is not
 * collected while the measured requests are counted.
 */
process.on('SIGWINCH', () => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (!collect) throw new Error('collect-on-signal needs node --expose-gc')
  collect()
  console.log('collected')
})
