import type { Db } from '../../db/client.ts'
import { SECOND, type Clock } from '../../lib/clock.ts'
import { taggedJson, type TaggedJson } from '../../http/tagged-answer.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { CategoryDetail, CategoryTreeItem } from './categories.service.ts'
import { createCategoriesRepository } from './categories.repository.ts'

/** The signal every instance hears when the tree or its counts changed (docs/decisions/0185). */
export const CATEGORY_TREE_SIGNAL = 'catalogue.category_tree'

/** The longest a kept tree is served: the bound on staleness should a signal be lost. */
export const CATEGORY_TREE_TTL_MS = 5 * SECOND

/** The tree as loaded once: the list's answer, and each category's answer by id and by slug. */
interface Snapshot {
  tree: TaggedJson<CategoryTreeItem[]>
  byKey: Map<string, TaggedJson<CategoryDetail>>
  loadedAt: number
}

/** Each category's `GET /categories/{id}` answer, built from the tree (its fields in the schema's order). */
function detailsOf(tree: CategoryTreeItem[]): Map<string, TaggedJson<CategoryDetail>> {
  const byKey = new Map<string, TaggedJson<CategoryDetail>>()
  const add = (detail: CategoryDetail) => {
    const tagged = taggedJson<CategoryDetail>(JSON.stringify(detail))
    byKey.set(detail.id, tagged)
    byKey.set(detail.slug, tagged)
  }
  for (const top of tree) {
    add({ ...top, parent: null })
    const parent = { id: top.id, name: top.name, slug: top.slug }
    for (const sub of top.subcategories) add({ ...sub, subcategories: [], parent })
  }
  return byKey
}

/**
 * `GET /categories` and `GET /categories/{id}` from memory. The tree changes a few times a day
 * and is read on most pages: each instance keeps it, with its counts, as the answers' JSON text
 * and tags, and drops it when told it changed (`changed`, heard by every instance through the
 * realtime hub) or once it is `CATEGORY_TREE_TTL_MS` old. Concurrent reads of a dropped tree
 * share one load; a load that a change overtook answers its own readers but is not kept.
 */
export function createCategoryTree(deps: { db: Db; clock: Clock; realtime: Pick<RealtimeHub, 'signal' | 'onSignal'>; ttlMs?: number }) {
  const { db, clock, realtime } = deps
  const ttlMs = deps.ttlMs ?? CATEGORY_TREE_TTL_MS
  let snapshot: Snapshot | undefined
  let loading: Promise<Snapshot> | undefined
  let generation = 0

  const drop = () => {
    generation++
    snapshot = undefined
    loading = undefined
  }
  realtime.onSignal((name) => {
    if (name === CATEGORY_TREE_SIGNAL) drop()
  })

  async function load(): Promise<Snapshot> {
    const started = generation
    const loadedAt = clock.now().getTime()
    const tree = await createCategoriesRepository(db).tree()
    const loaded = { tree: taggedJson<CategoryTreeItem[]>(tree.text), byKey: detailsOf(tree.parse()), loadedAt }
    if (started === generation) snapshot = loaded
    return loaded
  }

  function current(): Promise<Snapshot> {
    if (snapshot && clock.now().getTime() - snapshot.loadedAt < ttlMs) return Promise.resolve(snapshot)
    if (!loading) {
      const started = load()
      loading = started
      const settle = () => {
        if (loading === started) loading = undefined
      }
      started.then(settle, settle)
    }
    return loading
  }

  return {
    list: async () => (await current()).tree,

    /** A category's answer by id (in any letter case) or slug; undefined when the kept tree does not have it. */
    find: async (idOrSlug: string) => (await current()).byKey.get(idOrSlug.toLowerCase()),

    /** Drops the tree on this instance only (it found the tree older than the database). */
    dropHere: drop,

    /** Drops the tree here at once, then on every other instance (after the change committed). */
    async changed(): Promise<void> {
      drop()
      await realtime.signal(CATEGORY_TREE_SIGNAL)
    },
  }
}

export type CategoryTree = ReturnType<typeof createCategoryTree>

type AsyncMethod = (...args: never[]) => Promise<unknown>

/**
 * The same use cases, each followed, once it succeeded, by `tree.changed()`: for writes that
 * move a service in or out of a category's count (approve, pause, resume, edit, delete).
 */
export function changingTheTree<Api extends Record<string, unknown>, Name extends keyof Api>(tree: Pick<CategoryTree, 'changed'>, api: Api, names: readonly Name[]): Api {
  const wrapped: Record<string, unknown> = { ...api }
  for (const name of names) {
    const method = api[name] as AsyncMethod
    wrapped[name as string] = async (...args: never[]) => {
      const result = await method(...args)
      await tree.changed()
      return result
    }
  }
  return wrapped as Api
}
