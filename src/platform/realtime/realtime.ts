/**
 * Realtime delivery to users' open sockets, on whichever instance holds them. The hub knows
 * users, sessions (token families) and sockets; it knows nothing of what the frames mean.
 */

/** What travels to a client: JSON `{ type, data }` (decision 0052). */
export interface Frame {
  type: string
  data: unknown
}

/** The close code of a socket whose session ended (logout) or whose user was locked out. */
export const SESSION_ENDED = 4401

/** The part of a `ws` socket the hub uses (a structural type, so tests may pass fakes). */
export interface HubSocket {
  readonly readyState: number
  send(data: string): void
  ping(): void
  close(code?: number, reason?: string): void
  terminate(): void
  on(event: 'pong' | 'close', listener: () => void): unknown
}

export interface SocketOwner {
  userId: string
  /** The login session (token family) the socket was opened with. */
  familyId: string
}

/**
 * One of a user's places for an open socket (at most `WS_MAX_SOCKETS_PER_USER` across every
 * login and instance), taken before the upgrade and held by the socket until it ends.
 */
export interface SocketSlot {
  readonly owner: SocketOwner
  /** Gives the place back; only the first call counts, whichever end of the socket comes first. */
  release(): void
}

export interface RealtimeHub {
  /** `redis` when frames and presence are shared through Redis, `memory` when within this process. */
  readonly kind: 'memory' | 'redis'
  /**
   * Takes one of the user's socket places before the upgrade, counting their sockets on every
   * instance (through Redis when shared); undefined when they hold the cap already. The caller
   * releases it if the upgrade does not happen; once `connect`ed, it is released when the socket
   * ends.
   */
  reserve(owner: SocketOwner): Promise<SocketSlot | undefined>
  /** Starts tracking an open socket, in the place reserved for it, until it closes. */
  connect(socket: HubSocket, slot: SocketSlot): void
  /** Sends a frame to every open socket of these users, on every instance. */
  publish(userIds: readonly string[], frame: Frame): Promise<void>
  /** Closes every socket of the user with 4401, on every instance (suspension). */
  disconnectUser(userId: string, reason?: string): Promise<void>
  /** Closes the sockets opened with these sessions with 4401, on every instance (logout). */
  disconnectSessions(userId: string, familyIds: readonly string[], reason?: string): Promise<void>
  /**
   * Tells every instance, this one included, that something instances keep in memory changed
   * (`name` says what, e.g. the category tree): the same channel as frames, so a signal reaches
   * the instances a frame would reach. With Redis unreachable only this instance hears it.
   */
  signal(name: string): Promise<void>
  /** Calls `listener` with the name of every signal from any instance (the receiver's own included). */
  onSignal(listener: (name: string) => void): void
  /** Whether the user has an open socket on any instance. */
  isOnline(userId: string): Promise<boolean>
  /**
   * Users with an open socket on any instance, at most `limit` of them (in no particular order),
   * for reads that filter by presence; without Redis, or while it is unreachable, this instance's.
   */
  onlineUsers(limit: number): Promise<string[]>
  /** Sockets open on this instance. */
  localSocketCount(): number
  /**
   * One heartbeat round on this instance: sockets that did not answer the previous ping are
   * dropped, the others are pinged. The hub runs it on its interval; tests call it directly.
   */
  heartbeat(): Promise<void>
  /** Starts the heartbeat and, with Redis, waits (a few seconds at most) for the subscription. */
  start(): Promise<void>
  /** Closes local sockets (1001) and forgets this instance's presence. */
  close(): Promise<void>
}
