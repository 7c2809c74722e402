import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AddressPolicy, parseIpLiteral } from '../../src/images/address-policy.js';

test('public unicast addresses are allowed', () => {
  const policy = new AddressPolicy();
  for (const a of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
    assert.deepEqual(policy.check(a), { allowed: true }, a);
  }
});

test('non-public addresses are refused with a reason', () => {
  const policy = new AddressPolicy();
  const cases: Array<[string, RegExp]> = [
    ['127.0.0.1', /loopback/],
    ['10.0.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.0.1', /private/],
    ['100.127.0.1', /carrier-grade NAT/],
    ['169.254.0.1', /link-local/],
    ['169.254.169.254', /cloud metadata/],
    ['0.0.0.0', /unspecified/],
    ['255.255.255.255', /broadcast/],
    ['239.255.255.250', /multicast/],
    ['192.0.2.1', /reserved or documentation/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['::ffff:127.0.0.1', /IPv4-mapped form of a loopback/],
    ['::ffff:0:a00:1', /IPv4-mapped form of a private/],
    ['64:ff9b::a9fe:a9fe', /cloud metadata/],
    ['64:ff9b::c0a8:1', /NAT64 form of a private/],
    ['::7f00:1', /IPv4-compatible/],
    ['fd00:ec2::254', /cloud metadata/],
    ['fc00::1', /unique-local/],
    ['fe80::1', /link-local/],
    ['ff02::1', /multicast/],
    ['2001:db8::1', /reserved/],
  ];
  for (const [address, reason] of cases) {
    const verdict = policy.check(address);
    assert.equal(verdict.allowed, false, address);
    assert.match((verdict as { reason: string }).reason, reason, address);
  }
});

test('the allow-list opens exactly its ranges, in both IPv4 and IPv4-mapped form', () => {
  const policy = new AddressPolicy(['127.0.0.0/8', '10.1.0.0/16', 'fd00:1::/32']);
  assert.equal(policy.check('127.0.0.1').allowed, true);
  assert.equal(policy.check('::ffff:127.0.0.1').allowed, true);
  assert.equal(policy.check('10.1.2.3').allowed, true);
  assert.equal(policy.check('10.2.0.1').allowed, false);
  assert.equal(policy.check('fd00:1::5').allowed, true);
  assert.equal(policy.check('fd00:2::5').allowed, false);
  assert.equal(policy.check('::1').allowed, false, 'IPv6 loopback needs its own entry');
  assert.equal(policy.check('169.254.169.254').allowed, false);
});

test('cloud metadata stays refused under the widest allow-list', () => {
  const policy = new AddressPolicy(['0.0.0.0/0', '::/0']);
  for (const a of ['169.254.169.254', '::ffff:169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '169.254.170.2']) {
    assert.equal(policy.check(a).allowed, false, a);
  }
  assert.equal(policy.check('10.0.0.1').allowed, true);
});

test('Azure WireServer is refused although it is public unicast, in every form, under any allow-list', () => {
  // 168.63.129.16 hands out the VM agent's configuration and extension settings; ipaddr.js calls it unicast.
  for (const policy of [new AddressPolicy(), new AddressPolicy(['0.0.0.0/0', '::/0']), new AddressPolicy(['168.63.129.0/24'])]) {
    for (const a of ['168.63.129.16', '::ffff:168.63.129.16', '64:ff9b::a83f:8110', '::ffff:0:a83f:8110']) {
      const verdict = policy.check(a);
      assert.equal(verdict.allowed, false, a);
      assert.match((verdict as { reason: string }).reason, /cloud metadata/, a);
    }
  }
  // its neighbours are ordinary public addresses
  assert.deepEqual(new AddressPolicy().check('168.63.129.17'), { allowed: true });
});

test('Oracle Cloud IMDS (192.0.0.192) stays refused under the widest allow-list', () => {
  assert.match((new AddressPolicy().check('192.0.0.192') as { reason: string }).reason, /cloud metadata/);
  const wide = new AddressPolicy(['0.0.0.0/0', '::/0']);
  assert.equal(wide.check('192.0.0.192').allowed, false);
  assert.equal(wide.check('::ffff:192.0.0.192').allowed, false);
  assert.equal(wide.check('192.0.0.193').allowed, true, 'the rest of 192.0.0/24 follows the allow-list');
});

test('parseIpLiteral reads every IPv4 spelling and bracketed IPv6, and nothing else', () => {
  for (const s of ['2130706433', '0x7f.1', '0177.0.0.1', '127.1', '0x7f000001', '127.0.0.1']) {
    assert.equal(parseIpLiteral(s)?.toString(), '127.0.0.1', s);
  }
  assert.equal(parseIpLiteral('[::1]')?.toString(), '::1');
  assert.equal(parseIpLiteral('example.com'), null);
  assert.equal(parseIpLiteral('1.2.3.4.5'), null);
});

test('invalid allow-list entries are refused', () => {
  assert.throws(() => new AddressPolicy(['10.0.0.0']), /not a CIDR/);
  assert.throws(() => new AddressPolicy(['example.com/8']), /not a CIDR/);
});
