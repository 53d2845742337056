import type { Actor } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { emailByDefault, emailRuleOf, settableKinds, type NotificationKind } from './notification-kinds.ts'
import { createNotificationsRepository } from './notifications.repository.ts'

type Choices = Record<string, boolean>

/** Every settable kind with the person's choice, or its default where they made none. */
const settingsOf = (choices: Choices) => ({ email: Object.fromEntries(settableKinds.map((kind) => [kind, choices[kind] ?? emailByDefault(kind)])) })

/** Per kind, whether a notification is e-mailed as well (docs/notifications.md). */
export function createNotificationSettings(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps

  /** Whether the person wants this kind e-mailed: their choice, else the kind's default; security news always. */
  async function emailWanted(executor: Executor, userId: string, kind: NotificationKind): Promise<boolean> {
    if (emailRuleOf(kind) === 'always') return true
    const choices = await createNotificationsRepository(executor).emailChoices(userId)
    return choices[kind] ?? emailByDefault(kind)
  }

  return {
    emailWanted,

    /** `GET /users/me/notification-settings`. */
    async getSettings(actor: Actor) {
      return settingsOf(await createNotificationsRepository(db).emailChoices(actor.id))
    },

    /** `PUT /users/me/notification-settings`: the kinds named change, the others keep their setting. */
    async updateSettings(actor: Actor, body: { email: Partial<Record<string, boolean>> }) {
      const changes = Object.fromEntries(Object.entries(body.email).filter((entry): entry is [string, boolean] => typeof entry[1] === 'boolean'))
      return settingsOf(await createNotificationsRepository(db).mergeEmailChoices(actor.id, changes, clock.now()))
    },
  }
}
