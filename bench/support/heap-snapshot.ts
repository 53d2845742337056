/**
 * A summary of a `.heapsnapshot` file: self size and count per constructor (objects, by their
 * constructor's name) or per kind of thing (strings, arrays, code, closures, system objects),
 * largest first, as the Summary view of the browser's memory tools groups them.
 */
import { readFileSync } from 'node:fs'

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] }; node_count: number }
  nodes: number[]
  strings: string[]
}

export interface HeapGroup {
  name: string
  count: number
  selfSize: number
}

/** Objects are grouped by constructor; everything else by kind, in parentheses as the browser shows it. */
function groupOf(type: string, name: string): string {
  if (type === 'object' || type === 'native') return name
  if (type === 'closure') return '(closure)'
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return '(string)'
  if (type === 'array') return `(array${name ? `: ${name}` : ''})`
  if (type === 'code') return '(compiled code)'
  if (type === 'hidden' || type === 'synthetic') return `(system${name && !name.startsWith('(') ? `: ${name}` : ''})`
  return `(${type})`
}

export interface HeapSummary {
  totalSelfSize: number
  nodes: number
  /** The largest groups, largest first. */
  groups: HeapGroup[]
  /** The largest single strings: their size and first characters. */
  strings: { selfSize: number; start: string }[]
}

export function summariseHeapSnapshot(path: string, top = 15): HeapSummary {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Snapshot
  const fields = parsed.snapshot.meta.node_fields
  const types = parsed.snapshot.meta.node_types[0]
  const [typeAt, nameAt, sizeAt] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')]
  const width = fields.length
  const groups = new Map<string, HeapGroup>()
  const strings: HeapSummary['strings'] = []
  let totalSelfSize = 0
  for (let offset = 0; offset < parsed.nodes.length; offset += width) {
    const [type, text] = [types[parsed.nodes[offset + typeAt]!]!, parsed.strings[parsed.nodes[offset + nameAt]!]!]
    const name = groupOf(type, text)
    const size = parsed.nodes[offset + sizeAt]!
    // A string node's name is its text (cut by V8 at 1,024 characters in the snapshot).
    if (type === 'string' && size > 16_384) strings.push({ selfSize: size, start: text.slice(0, 60).replace(/\s+/g, ' ') })
    totalSelfSize += size
    const group = groups.get(name) ?? { name, count: 0, selfSize: 0 }
    group.count++
    group.selfSize += size
    groups.set(name, group)
  }
  return {
    totalSelfSize,
    nodes: parsed.nodes.length / width,
    groups: [...groups.values()].sort((a, b) => b.selfSize - a.selfSize).slice(0, top),
    strings: strings.sort((a, b) => b.selfSize - a.selfSize).slice(0, 8),
  }
}
