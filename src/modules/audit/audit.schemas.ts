import { Type, type Static } from '@sinclair/typebox'
import { Id, Nullable, PageQuery, Timestamp } from '../../http/common.schemas.ts'

const Snapshot = Nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'The fields the action changed.' }))

export const AuditEntry = Type.Object({
  id: Id,
  action: Type.String({ description: '`<target>.<verb>`, e.g. `user.suspend`, `service.approve`, `kyc.reject`, `payout.approve`, `wallet.adjust`.' }),
  actorId: Nullable(Id),
  targetType: Type.String({ description: 'What was acted on: `user`, `service`, `kyc_submission`, `payout`, `role`, ...' }),
  targetId: Id,
  reason: Nullable(Type.String()),
  before: Snapshot,
  after: Snapshot,
  requestId: Nullable(Type.String({ description: 'The `X-Request-Id` of the request that did it.' })),
  createdAt: Timestamp,
})

const Uuid = (description: string) => Type.String({ maxLength: 36, format: 'uuid', errorMessage: 'must be an id', description })

export const AuditQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      actor: Type.Optional(Uuid('Only actions by this staff member.')),
      target: Type.Optional(Uuid('Only actions on this object (a user, service, payout, ...).')),
      targetType: Type.Optional(Type.String({ maxLength: 40, pattern: '^[a-z_]{1,40}$', errorMessage: 'must be a target type such as user or payout' })),
      action: Type.Optional(Type.String({ maxLength: 81, pattern: '^[a-z_]{1,40}\\.[a-z_]{1,40}$', errorMessage: 'must be an action such as user.suspend' })),
    }),
  ],
  { additionalProperties: false },
)
export type AuditQuery = Static<typeof AuditQuery>
