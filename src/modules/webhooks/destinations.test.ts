import { BlockList } from 'node:net'
import { describe, expect, it } from 'vitest'
import { addressRefusal, checkedAddress, PLATFORM_RANGES, PRIVATE_RANGES, urlProblem, type Resolver } from './destinations.ts'

const PLATFORM = 'a cloud metadata or platform address'
const PRIVATE = 'a private or reserved address'

/** Every way a URL can spell one IPv4 address; the URL parser reads each as the dotted address. */
function ipv4Forms(dotted: string): [string, string][] {
  const octets = dotted.split('.').map(Number)
  const value = octets.reduce((sum, octet) => sum * 256 + octet, 0)
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0')
  return [
    ['dotted', dotted],
    ['decimal', String(value)],
    ['octal', octets.map((octet) => `0${octet.toString(8)}`).join('.')],
    ['hex', `0x${hex(value, 8)}`],
    ['dotted hex', octets.map((octet) => `0x${hex(octet, 2)}`).join('.')],
    ['IPv4-mapped IPv6', `[::ffff:${hex(value >>> 16, 1)}:${hex(value & 0xffff, 1)}]`],
    ['IPv4-mapped IPv6, dotted', `[::ffff:${dotted}]`],
  ]
}

/** The ways a URL can spell one IPv6 address. */
function ipv6Forms(compact: string): [string, string][] {
  const [head = '', tail = ''] = compact.split('::')
  const groups = (part: string) => (part === '' ? [] : part.split(':'))
  const zeros = Array.from({ length: 8 - groups(head).length - groups(tail).length }, () => '0')
  const full = [...groups(head), ...zeros, ...groups(tail)].map((group) => group.padStart(4, '0'))
  return [
    ['compact', `[${compact}]`],
    ['expanded', `[${full.join(':')}]`],
    ['upper case', `[${compact.toUpperCase()}]`],
  ]
}

const formsOf = (address: string) => (address.includes(':') ? ipv6Forms(address) : ipv4Forms(address))

const refusing = (async () => {
  throw new Error('an IP literal must not be resolved')
}) satisfies Resolver
const check = (host: string, allowPrivateNetworks: boolean) => checkedAddress(new URL(`http://${host}/hook`), { allowPrivateNetworks, resolve: refusing })

/** Each address of the platform list, in every form, private networks allowed or not. */
const PLATFORM_ADDRESSES = [
  '169.254.169.254', // AWS, Google Cloud, Azure, Oracle, OpenStack instance metadata
  '169.254.170.2', // AWS ECS task credentials
  '168.63.129.16', // Azure WireServer
  '100.100.100.200', // Alibaba Cloud metadata
  '192.0.0.192', // Oracle Cloud metadata
  'fd00:ec2::254', // AWS metadata over IPv6
  'fd20:ce::254', // Google Cloud metadata over IPv6
  'fe80::1', // IPv6 link-local
]

describe('cloud metadata and platform addresses', () => {
  it('has an example here for every range of the list', () => {
    const holds = (range: (typeof PLATFORM_RANGES)[number], address: string) => {
      const list = new BlockList()
      list.addSubnet(range.network, range.prefix, range.network.includes(':') ? 'ipv6' : 'ipv4')
      return list.check(address, address.includes(':') ? 'ipv6' : 'ipv4')
    }
    expect(PLATFORM_RANGES.filter((range) => !PLATFORM_ADDRESSES.some((address) => holds(range, address))).map((range) => range.network)).toEqual([])
  })

  describe.each(PLATFORM_ADDRESSES)('%s', (address) => {
    it.each(formsOf(address))('is refused written %s (%s), even with private networks allowed', async (_form, host) => {
      for (const allowPrivateNetworks of [false, true]) {
        await expect(check(host, allowPrivateNetworks)).rejects.toMatchObject({ reason: 'refused', message: expect.stringContaining(`is ${PLATFORM}`) })
      }
    })
  })

  it.each([
    ['NAT64', '[64:ff9b::a9fe:a9fe]'],
    ['IPv4-translated', '[::ffff:0:a9fe:a9fe]'],
    ['IPv4-compatible', '[::a9fe:a9fe]'],
    ['6to4', '[2002:a9fe:a9fe::1]'],
  ])('refuses 169.254.169.254 carried in a %s address even with private networks allowed', async (_form, host) => {
    await expect(check(host, true)).rejects.toMatchObject({ message: expect.stringContaining(PLATFORM) })
  })

  it('refuses a name that resolves to a platform address, private networks allowed', async () => {
    const resolve: Resolver = async () => [{ address: '168.63.129.16', family: 4 }]
    await expect(checkedAddress(new URL('http://wireserver.example/'), { allowPrivateNetworks: true, resolve })).rejects.toThrow(`wireserver.example resolves to ${PLATFORM} (168.63.129.16)`)
  })
})

describe('private and reserved addresses', () => {
  describe.each(['100.64.0.1', '100.127.255.254', '10.0.0.1', '127.0.0.1'])('%s', (address) => {
    it.each(formsOf(address))('is refused written %s (%s) unless private networks are allowed', async (_form, host) => {
      await expect(check(host, false)).rejects.toMatchObject({ reason: 'refused', message: expect.stringContaining(`is ${PRIVATE}`) })
      expect(await check(host, true)).toEqual({ address: expect.any(String), family: expect.any(Number) })
    })
  })

  it.each([
    '127.255.255.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::',
    'ff02::1',
  ])('refuses %s', (address) => {
    expect(addressRefusal(address, { allowPrivateNetworks: false })).toBe(PRIVATE)
  })

  it.each(['93.184.215.14', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '168.63.129.17', '2606:4700:4700::1111', '2a00:1450:4001:81c::200e', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(addressRefusal(address, { allowPrivateNetworks: false })).toBeUndefined()
  })

  it('refuses what is not an IP address', () => {
    expect(addressRefusal('not an address', { allowPrivateNetworks: true })).toBe('an unreadable address')
  })

  it('keeps the two lists apart: no platform range is also listed as private', () => {
    expect(PRIVATE_RANGES.filter((range) => PLATFORM_RANGES.some((platform) => platform.network === range.network))).toEqual([])
  })
})

describe('urlProblem', () => {
  it('accepts http and https URLs without credentials', () => {
    expect(urlProblem('https://hooks.example.com/in?x=1')).toBeUndefined()
    expect(urlProblem('http://93.184.215.14:8080/')).toBeUndefined()
  })

  it.each([
    ['ftp://example.com/', 'must be an http or https URL'],
    ['javascript:alert(1)', 'must be an http or https URL'],
    ['file:///etc/passwd', 'must be an http or https URL'],
    ['https://user@example.com/', 'must not contain credentials'],
    ['example.com/hook', 'must be a valid absolute URL'],
  ])('refuses %s', (url, problem) => {
    expect(urlProblem(url)).toBe(problem)
  })
})

describe('checkedAddress', () => {
  const resolving =
    (...addresses: string[]): Resolver =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }))

  it('resolves a name once and answers its first address when every address is public', async () => {
    expect(await checkedAddress(new URL('https://hooks.example.com/'), { allowPrivateNetworks: false, resolve: resolving('93.184.215.14', '2606:4700::1') })).toEqual({ address: '93.184.215.14', family: 4 })
  })

  it('refuses a name with any private address, and a name that does not resolve', async () => {
    await expect(checkedAddress(new URL('https://mixed.example/'), { allowPrivateNetworks: false, resolve: resolving('93.184.215.14', '10.0.0.5') })).rejects.toThrow('mixed.example resolves to a private or reserved address (10.0.0.5)')
    await expect(checkedAddress(new URL('https://none.example/'), { allowPrivateNetworks: false, resolve: resolving() })).rejects.toMatchObject({ reason: 'unresolved', message: 'none.example does not resolve' })
    const failing = async () => {
      throw new Error('ENOTFOUND')
    }
    await expect(checkedAddress(new URL('https://gone.example/'), { allowPrivateNetworks: false, resolve: failing })).rejects.toThrow('gone.example does not resolve')
  })

  it('checks IP literals without resolving them, IPv6 included', async () => {
    expect(await checkedAddress(new URL('http://[2606:4700::1]/'), { allowPrivateNetworks: false, resolve: refusing })).toEqual({ address: '2606:4700::1', family: 6 })
  })

  it('lets private addresses through when private networks are allowed, still pinning the resolved one', async () => {
    expect(await checkedAddress(new URL('http://internal.example/'), { allowPrivateNetworks: true, resolve: resolving('10.0.0.5') })).toEqual({ address: '10.0.0.5', family: 4 })
  })
})
