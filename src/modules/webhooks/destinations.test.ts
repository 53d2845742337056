import { describe, expect, it } from 'vitest'
import { checkedAddress, isPrivateAddress, urlProblem } from './destinations.ts'

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.100.100.200',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a00:1',
    '2002:7f00:1::',
    'ff02::1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true)
  })

  it.each(['93.184.215.14', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001:81c::200e', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false)
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
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }))

  it('resolves a name once and answers its first address when every address is public', async () => {
    expect(await checkedAddress(new URL('https://hooks.example.com/'), { allowPrivateNetworks: false, resolve: resolving('93.184.215.14', '2606:4700::1') })).toEqual({ address: '93.184.215.14', family: 4 })
  })

  it('refuses a name with any private address, and a name that does not resolve', async () => {
    await expect(checkedAddress(new URL('https://mixed.example/'), { allowPrivateNetworks: false, resolve: resolving('93.184.215.14', '10.0.0.5') })).rejects.toThrow('mixed.example resolves to a private or reserved address (10.0.0.5)')
    await expect(checkedAddress(new URL('https://none.example/'), { allowPrivateNetworks: false, resolve: resolving() })).rejects.toThrow('none.example does not resolve')
    const failing = async () => {
      throw new Error('ENOTFOUND')
    }
    await expect(checkedAddress(new URL('https://gone.example/'), { allowPrivateNetworks: false, resolve: failing })).rejects.toThrow('gone.example does not resolve')
  })

  it('checks IP literals without resolving them, IPv6 included', async () => {
    const resolve = async () => {
      throw new Error('must not resolve a literal')
    }
    await expect(checkedAddress(new URL('http://[::ffff:a9fe:a9fe]/'), { allowPrivateNetworks: false, resolve })).rejects.toThrow('private or reserved')
    expect(await checkedAddress(new URL('http://[2606:4700::1]/'), { allowPrivateNetworks: false, resolve })).toEqual({ address: '2606:4700::1', family: 6 })
  })

  it('lets private addresses through when private networks are allowed, still pinning the resolved one', async () => {
    expect(await checkedAddress(new URL('http://internal.example/'), { allowPrivateNetworks: true, resolve: resolving('10.0.0.5') })).toEqual({ address: '10.0.0.5', family: 4 })
  })
})
