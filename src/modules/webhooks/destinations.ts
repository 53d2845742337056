import { lookup as dnsLookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

/**
 * Where webhooks may go (DESIGN 6): http or https URLs without credentials, and, unless private
 * networks are allowed, only hosts whose every address is public. The check runs at registration
 * and again at every delivery, and the delivery connects to the address that was checked, so a
 * DNS answer that changes in between (DNS rebinding) cannot redirect it into the network.
 */

/** Loopback, private, link-local (cloud metadata), CGNAT, reserved and documentation ranges. */
const blocked = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (and Alibaba's metadata at 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata at 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  blocked.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback (::1) and IPv4-compatible addresses
  ['64:ff9b::', 96], // NAT64: reaches any IPv4 address, private ones included
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds any IPv4 address
  ['fc00::', 7], // unique local (AWS metadata at fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  blocked.addSubnet(network, prefix, 'ipv6')

const MAPPED_IPV4 = /^::ffff:(?:0:)?(\d{1,3}(?:\.\d{1,3}){3})$/i
const MAPPED_IPV4_HEX = /^::ffff:(?:0:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, `::ffff:a00:1`), if any. */
function mappedIpv4(address: string): string | undefined {
  const dotted = MAPPED_IPV4.exec(address)
  if (dotted) return dotted[1]
  const hex = MAPPED_IPV4_HEX.exec(address)
  if (!hex) return undefined
  const high = parseInt(hex[1]!, 16)
  const low = parseInt(hex[2]!, 16)
  return [high >> 8, high & 255, low >> 8, low & 255].join('.')
}

/** True when an IP address is in a range webhooks must not reach (IPv4, IPv6, IPv4-mapped IPv6). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return blocked.check(address, 'ipv4')
  if (family !== 6) return true
  const embedded = mappedIpv4(address.toLowerCase())
  if (embedded !== undefined) return isIP(embedded) !== 4 || blocked.check(embedded, 'ipv4')
  return blocked.check(address, 'ipv6')
}

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Resolves a host name to every address it has (the system resolver, as connections use). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

export const systemResolver: Resolver = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true })
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
}

/** Why a URL cannot be a webhook destination, or undefined when its form is fine. */
export function urlProblem(raw: string): string | undefined {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'must be a valid absolute URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL'
  if (url.username !== '' || url.password !== '') return 'must not contain credentials'
  if (url.hostname === '') return 'must name a host'
  return undefined
}

/** The host of a URL as a resolver or `isIP` takes it (IPv6 literals without their brackets). */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1')

export class DestinationError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DestinationError'
  }
}

/**
 * The address to connect to for a URL, resolved once: an IP literal is taken as it is, a name is
 * resolved. Unless private networks are allowed, it is refused if any of the addresses is private
 * (a name with one public and one private address could reach either).
 */
export async function checkedAddress(url: URL, options: { allowPrivateNetworks: boolean; resolve: Resolver }): Promise<ResolvedAddress> {
  const host = hostOf(url)
  const family = isIP(host)
  if (family !== 0) {
    if (!options.allowPrivateNetworks && isPrivateAddress(host)) throw new DestinationError(`${host} is a private or reserved address`)
    return { address: host, family: family === 6 ? 6 : 4 }
  }
  let addresses: ResolvedAddress[]
  try {
    addresses = await options.resolve(host)
  } catch {
    throw new DestinationError(`${host} does not resolve`)
  }
  if (addresses.length === 0) throw new DestinationError(`${host} does not resolve`)
  const refused = options.allowPrivateNetworks ? undefined : addresses.find((candidate) => isPrivateAddress(candidate.address))
  if (refused) throw new DestinationError(`${host} resolves to a private or reserved address (${refused.address})`)
  return addresses[0]!
}
