import type {} from '@fastify/websocket'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { actorOf, callerOf, requireAuth, sessionOf } from '../../http/auth-hooks.ts'
import { Envelope, ok, responses } from '../../http/common.schemas.ts'
import { answer } from '../../http/json-text.ts'
import { withForm } from '../../http/multipart.ts'
import { notFound } from '../../lib/errors.ts'
import type { RealtimeHub, SocketSlot } from '../../platform/realtime/realtime.ts'
import { messagingErrors, tooManySockets } from './messaging.errors.ts'
import { CursorPage } from '../../http/common.schemas.ts'
import { AttachmentForm, Conversation, ConversationParams, ListQuery, MarkReadBody, Message, MessagePage, ReadReceipt, SendMessageBody } from './messaging.schemas.ts'
import type { MessagingService } from './messaging.service.ts'

const tags = ['messages']
const security = [{ bearerAuth: [] }]

type App = Parameters<FastifyPluginAsyncTypebox>[0]

export const messagingRoutes: FastifyPluginAsyncTypebox<{ messaging: MessagingService; realtime: RealtimeHub; maxSocketsPerUser: number; tmpDir: string }> = async (app, { messaging, realtime, maxSocketsPerUser, tmpDir }) => {
  readingRoutes(app, messaging)
  sendingRoutes(app, messaging, tmpDir)
  socketRoute(app, realtime, maxSocketsPerUser)
}

/** Reading: the caller's conversations, a conversation's messages, and marking one read. */
function readingRoutes(app: App, messaging: MessagingService) {
  app.get(
    '/messages/conversations',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: "The caller's conversations",
        description: 'Newest activity first, each with the other participant, the last message and the unread count. Page with `page`, or with `cursor` (the previous answer’s `pagination.nextCursor`), which stays stable while conversations move.',
        querystring: ListQuery(20),
        response: responses({ 200: Envelope(CursorPage(Conversation)) }, 400, 401),
      },
    },
    async (request) => ok(await messaging.listConversations(actorOf(request), request.query)),
  )

  app.get(
    '/messages/conversations/:conversationId',
    {
      preValidation: requireAuth,
      config: { checksSessionItself: true },
      schema: {
        tags,
        security,
        summary: 'Messages of a conversation',
        description: 'Newest first (default limit 50), and marks the conversation read (the other participant gets a `read` frame). Page with `page`, or with `cursor` (the previous answer’s `pagination.nextCursor`), which stays stable while new messages arrive. A conversation the caller is not part of is 404.',
        params: ConversationParams,
        querystring: ListQuery(50),
        response: responses({ 200: Envelope(MessagePage) }, 400, 401, 404),
      },
    },
    async (request, reply) => answer(reply, await messaging.getConversationMessages(callerOf(request), request.params.conversationId, request.query)),
  )

  app.post(
    '/messages/conversations/:conversationId/read',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Mark a conversation read',
        description: 'Every message of it, without listing them. No body is needed; a body with any field is 400.',
        params: ConversationParams,
        body: MarkReadBody,
        response: responses({ 200: Envelope(ReadReceipt) }, 400, 401, 404),
      },
    },
    async (request) => ok(await messaging.markConversationRead(actorOf(request), request.params.conversationId)),
  )
}

/** Sending: a text message, or a file as a message. */
function sendingRoutes(app: App, messaging: MessagingService, tmpDir: string) {
  app.post(
    '/messages',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Send a message',
        description:
          'To a conversation of the caller (`conversationId`), or to a user (`recipientId`: starts or continues the direct conversation). An account that is suspended or deactivated cannot be written to (422 `RECIPIENT_UNAVAILABLE`); staff accounts can. Pushed at once to every open socket of both participants; a recipient with no open socket is e-mailed (at most once per conversation per 15 minutes). Sockets: open a WebSocket to `/api/v1/messages/ws` with `Authorization: Bearer <accessToken>` or, from a browser, the subprotocols `bearer, <accessToken>` (never a token in the URL); it receives JSON frames `{ type: "message" | "read" | "offer", data }` (`offer`: a custom offer of the caller’s that was accepted, declined, withdrawn or expired, as it stands now) and is closed with code 4401 when its session ends (logout, suspension).',
        body: SendMessageBody,
        response: responses({ 201: Envelope(Message) }, 400, 401, 404, messagingErrors.INVALID_RECIPIENT, messagingErrors.RECIPIENT_UNAVAILABLE),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await messaging.sendMessage(actorOf(request), request.body))),
  )

  app.post(
    '/messages/files',
    {
      preValidation: requireAuth,
      config: { rateLimitBucket: 'uploads' },
      schema: {
        tags,
        security,
        summary: 'Send a file',
        description: 'multipart/form-data with `conversationId`, one `file` (any type, at most 10 MB) and an optional `content` caption. The file is private to the participants; the answer carries a signed link to it.',
        ...AttachmentForm.schema,
        response: responses({ 201: Envelope(Message) }, 400, 401, 404, 415, messagingErrors.RECIPIENT_UNAVAILABLE),
      },
    },
    async (request, reply) => {
      const message = await withForm(request, AttachmentForm, tmpDir, ({ files, fields }) => messaging.sendAttachment(actorOf(request), files[0]!, fields))
      return reply.status(201).send(ok(message))
    },
  )
}

/**
 * The socket: authenticated at the upgrade like any request (Bearer header, or the subprotocol
 * pair `bearer, <token>`); refused with 401 before any upgrade, and with 429 when the user holds
 * the cap of open sockets already (decision 0107). Frames only flow to the client.
 */
function socketRoute(app: App, realtime: RealtimeHub, maxSocketsPerUser: number) {
  const slots = new WeakMap<FastifyRequest, SocketSlot>()
  app.route({
    method: 'GET',
    url: '/messages/ws',
    preValidation: requireAuth,
    preHandler: async (request) => {
      if (!request.ws) return
      const { actor, familyId } = sessionOf(request)
      const slot = await realtime.reserve({ userId: actor.id, familyId })
      if (!slot) throw tooManySockets(maxSocketsPerUser)
      // Given back with the connection, whether the upgrade happens or the client leaves first.
      request.raw.socket.once('close', () => slot.release())
      slots.set(request, slot)
    },
    schema: { hide: true },
    handler: async () => {
      throw notFound('WebSocket upgrade expected: this path')
    },
    wsHandler: (socket, request) => {
      realtime.connect(socket, slots.get(request)!)
    },
  })
}
