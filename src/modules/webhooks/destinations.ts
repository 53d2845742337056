import { lookup as dnsLookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Where webhooks may go (decisions 0062, 0115): http or https URLs without credentials, to hosts whose every
 * address is allowed. The check runs at registration and again at every delivery, and the delivery
 * connects to the address that was checked, so a DNS answer that changes in between (DNS
 * rebinding) cannot redirect it.
 *
 * Two lists decide (decision 0115). Cloud metadata and platform addresses are refused whatever the
 * configuration: a receiver never lives there, and reaching them hands out the machine's
 * credentials. Private and reserved ranges are refused unless `WEBHOOK_ALLOW_PRIVATE_NETWORKS` is
 * true (the default outside production), for receivers in one's own network.
 */

interface Range {
  network: string
  prefix: number
  what: string
}

/** Refused always, private networks allowed or not. */
export const PLATFORM_RANGES: readonly Range[] = [
  {
    network: '169.254.0.0',
    prefix: 16,
    what: 'IPv4 link-local: instance metadata at 169.254.169.254 (AWS, Google Cloud, Azure, Oracle, OpenStack), AWS ECS task credentials at 169.254.170.2, AWS DNS and time',
  },
  { network: '168.63.129.16', prefix: 32, what: "Azure's platform endpoint (WireServer: VM agent, DNS, health probes)" },
  { network: '100.100.100.200', prefix: 32, what: 'Alibaba Cloud instance metadata' },
  { network: '192.0.0.192', prefix: 32, what: 'Oracle Cloud instance metadata' },
  { network: 'fd00:ec2::254', prefix: 128, what: 'AWS instance metadata over IPv6' },
  { network: 'fd20:ce::254', prefix: 128, what: 'Google Cloud metadata over IPv6' },
  { network: 'fe80::', prefix: 10, what: 'IPv6 link-local' },
]

/** Refused unless private networks are allowed: loopback, private, shared, reserved and documentation ranges. */
export const PRIVATE_RANGES: readonly Range[] = [
  { network: '0.0.0.0', prefix: 8, what: '"this network"' },
  { network: '10.0.0.0', prefix: 8, what: 'private' },
  { network: '100.64.0.0', prefix: 10, what: 'shared address space (carrier-grade NAT, Tailscale)' },
  { network: '127.0.0.0', prefix: 8, what: 'loopback' },
  { network: '172.16.0.0', prefix: 12, what: 'private' },
  { network: '192.0.0.0', prefix: 24, what: 'IETF protocol assignments' },
  { network: '192.0.2.0', prefix: 24, what: 'documentation' },
  { network: '192.88.99.0', prefix: 24, what: '6to4 relay' },
  { network: '192.168.0.0', prefix: 16, what: 'private' },
  { network: '198.18.0.0', prefix: 15, what: 'benchmarking' },
  { network: '198.51.100.0', prefix: 24, what: 'documentation' },
  { network: '203.0.113.0', prefix: 24, what: 'documentation' },
  { network: '224.0.0.0', prefix: 4, what: 'multicast' },
  { network: '240.0.0.0', prefix: 4, what: 'reserved, broadcast' },
  { network: '::', prefix: 96, what: 'unspecified, loopback (::1), IPv4-compatible' },
  { network: '64:ff9b::', prefix: 96, what: 'NAT64: reaches any IPv4 address, private ones included' },
  { network: '64:ff9b:1::', prefix: 48, what: 'local-use NAT64' },
  { network: '100::', prefix: 64, what: 'discard' },
  { network: '2001::', prefix: 23, what: 'IETF protocol assignments (Teredo, ...)' },
  { network: '2001:db8::', prefix: 32, what: 'documentation' },
  { network: '2002::', prefix: 16, what: '6to4: embeds any IPv4 address' },
  { network: 'fc00::', prefix: 7, what: 'unique local' },
  { network: 'fec0::', prefix: 10, what: 'site-local (deprecated)' },
  { network: 'ff00::', prefix: 8, what: 'multicast' },
]

function blockListOf(ranges: readonly Range[]): BlockList {
  const list = new BlockList()
  for (const { network, prefix } of ranges) list.addSubnet(network, prefix, ipaddr.parse(network).kind() === 'ipv4' ? 'ipv4' : 'ipv6')
  return list
}

const platform = blockListOf(PLATFORM_RANGES)
const reserved = blockListOf(PRIVATE_RANGES)

/**
 * The forms an address reaches: itself, and the IPv4 address an IPv6 one carries where a gateway
 * or the host's stack would deliver to it (IPv4-mapped and -translated, IPv4-compatible, NAT64,
 * 6to4). `::ffff:a9fe:a9fe` is 169.254.169.254.
 */
function formsOf(address: ipaddr.IPv4 | ipaddr.IPv6): { text: string; type: 'ipv4' | 'ipv6' }[] {
  if (address.kind() === 'ipv4') return [{ text: address.toString(), type: 'ipv4' }]
  const v6 = address as ipaddr.IPv6
  const forms: { text: string; type: 'ipv4' | 'ipv6' }[] = [{ text: v6.toNormalizedString(), type: 'ipv6' }]
  const bytes = v6.toByteArray()
  const embedded = (offset: number) => forms.push({ text: bytes.slice(offset, offset + 4).join('.'), type: 'ipv4' })
  const range = v6.range()
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') embedded(12)
  else if (range === '6to4') embedded(2)
  else if (bytes.slice(0, 12).every((byte) => byte === 0) && !(range === 'unspecified' || range === 'loopback')) embedded(12)
  return forms
}

/** What kind of address may not receive webhooks (`a private or reserved address`), or undefined when it may. */
export function addressRefusal(address: string, options: { allowPrivateNetworks: boolean }): string | undefined {
  if (isIP(address) === 0) return 'an unreadable address'
  const forms = formsOf(ipaddr.parse(address))
  if (forms.some((form) => platform.check(form.text, form.type))) return 'a cloud metadata or platform address'
  if (!options.allowPrivateNetworks && forms.some((form) => reserved.check(form.text, form.type))) return 'a private or reserved address'
  return undefined
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
  /** `unresolved`: the name has no address (yet); `refused`: an address it has is not allowed. */
  readonly reason: 'unresolved' | 'refused'

  constructor(message: string, reason: 'unresolved' | 'refused') {
    super(message)
    this.name = 'DestinationError'
    this.reason = reason
  }
}

/**
 * The address to connect to for a URL, resolved once: an IP literal is taken as it is (the URL
 * parser has already turned decimal, octal and hex forms into dotted ones), a name is resolved.
 * Refused if any of the addresses is refused: a name with one public and one private address
 * could reach either.
 */
export async function checkedAddress(url: URL, options: { allowPrivateNetworks: boolean; resolve: Resolver }): Promise<ResolvedAddress> {
  const host = hostOf(url)
  const family = isIP(host)
  if (family !== 0) {
    const refusal = addressRefusal(host, options)
    if (refusal) throw new DestinationError(`${host} is ${refusal}`, 'refused')
    return { address: host, family: family === 6 ? 6 : 4 }
  }
  let addresses: ResolvedAddress[]
  try {
    addresses = await options.resolve(host)
  } catch {
    throw new DestinationError(`${host} does not resolve`, 'unresolved')
  }
  if (addresses.length === 0) throw new DestinationError(`${host} does not resolve`, 'unresolved')
  for (const candidate of addresses) {
    const refusal = addressRefusal(candidate.address, options)
    if (refusal) throw new DestinationError(`${host} resolves to ${refusal} (${candidate.address})`, 'refused')
  }
  return addresses[0]!
}
