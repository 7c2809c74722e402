/**
 * Which IP addresses the image fetcher may connect to. Public unicast only, unless an operator
 * allow-lists a range (IMAGE_FETCH_ALLOW_CIDRS). Classification comes from ipaddr.js; this module
 * only adds what it does not know: addresses hidden inside IPv6 forms, and the cloud metadata
 * endpoints, which no allow-list can open.
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

/** Refused even when an allow-list covers them: they hand out cloud credentials. */
const CLOUD_METADATA: readonly Cidr[] = [
  ipaddr.parseCIDR('169.254.169.254/32'), // AWS, GCP, Azure IMDS, OpenStack, DigitalOcean, Oracle (v1), ...
  ipaddr.parseCIDR('169.254.170.2/32'), // AWS ECS task credentials
  ipaddr.parseCIDR('100.100.100.200/32'), // Alibaba Cloud
  ipaddr.parseCIDR('fd00:ec2::254/128'), // AWS IMDS over IPv6
  // Azure WireServer (VM agent, extensions and their settings): a public unicast address, so
  // only this entry refuses it.
  ipaddr.parseCIDR('168.63.129.16/32'),
  ipaddr.parseCIDR('192.0.0.192/32'), // Oracle Cloud IMDS (also inside the reserved 192.0.0/24)
];

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (shared) address',
  private: 'a private address',
  reserved: 'a reserved or documentation address',
  benchmarking: 'a benchmarking address',
  as112: 'an AS112 address',
  amt: 'an AMT address',
  uniqueLocal: 'a unique-local (private) IPv6 address',
  rfc6052: 'a local-use NAT64 address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
  as112v6: 'an AS112 address',
  orchid2: 'an ORCHIDv2 address',
  droneRemoteIdProtocolEntityTags: 'a DRIP address',
  deprecatedSiteLocal: 'a site-local IPv6 address',
  deprecatedOrchid: 'an ORCHID address',
  discard: 'a discard-only IPv6 address',
  segmentRouting: 'a segment-routing IPv6 address',
};

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/**
 * Parses a literal IP address as a host name may spell it: dotted, decimal (2130706433), hex
 * (0x7f.1), octal (0177.0.0.1), short (127.1), or IPv6 with or without brackets. Null otherwise.
 */
export function parseIpLiteral(host: string): Address | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!ipaddr.isValid(bare)) return null;
  try {
    return ipaddr.parse(bare);
  } catch {
    return null;
  }
}

function v4FromLast32Bits(v6: ipaddr.IPv6): ipaddr.IPv4 {
  const p = v6.parts;
  return new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]);
}

function inCidr(address: Address, [net, bits]: Cidr): boolean {
  return address.kind() === net.kind() && address.match(net, bits);
}

/** Why an address is not public unicast, or null when it is. Ignores the allow-list. */
export function refusalReason(address: Address): string | null {
  if (address.kind() === 'ipv4') {
    const range = (address as ipaddr.IPv4).range();
    return range === 'unicast' ? null : (RANGE_NAMES[range] ?? `a special-purpose address (${range})`);
  }
  const v6 = address as ipaddr.IPv6;
  if (v6.zoneId !== undefined) return 'a scoped IPv6 address';
  const range = v6.range();
  // Forms that carry an IPv4 address: judge the IPv4 address they lead to.
  if (range === 'ipv4Mapped' || range === 'rfc6145') {
    const inner = refusalReason(v4FromLast32Bits(v6));
    return inner === null ? null : `an IPv4-mapped form of ${inner}`;
  }
  if (inCidr(v6, NAT64_WELL_KNOWN)) {
    const inner = refusalReason(v4FromLast32Bits(v6));
    return inner === null ? null : `a NAT64 form of ${inner}`;
  }
  if (range === 'unspecified' || range === 'loopback') return RANGE_NAMES[range];
  // ::/96 "IPv4-compatible" addresses are deprecated (RFC 4291); nothing public uses them.
  if (v6.parts.slice(0, 6).every((p) => p === 0)) return 'an IPv4-compatible IPv6 address';
  if (range !== 'unicast') return RANGE_NAMES[range] ?? `a special-purpose IPv6 address (${range})`;
  if (!inCidr(v6, GLOBAL_UNICAST_V6)) return 'an unassigned IPv6 address';
  return null;
}

function isCloudMetadata(address: Address): boolean {
  const candidates: Address[] = [address];
  if (address.kind() === 'ipv6') {
    const v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress() || v6.range() === 'rfc6145' || inCidr(v6, NAT64_WELL_KNOWN) || v6.parts.slice(0, 6).every((p) => p === 0)) {
      candidates.push(v4FromLast32Bits(v6));
    }
  }
  return candidates.some((a) => CLOUD_METADATA.some((c) => inCidr(a, c)));
}

/** Parses CIDRs such as 10.0.0.0/8 or fd00::/8; throws with the offending entry. */
export function parseCidrs(cidrs: readonly string[]): Cidr[] {
  return cidrs.map((c) => {
    try {
      return ipaddr.parseCIDR(c.trim());
    } catch {
      throw new Error(`"${c}" is not a CIDR range such as 10.0.0.0/8 or fd00::/8`);
    }
  });
}

export class AddressPolicy {
  private readonly allow: Cidr[];

  constructor(allowCidrs: readonly string[] = []) {
    this.allow = parseCidrs(allowCidrs);
  }

  private allowListed(address: Address): boolean {
    const forms: Address[] = [address];
    if (address.kind() === 'ipv4') forms.push((address as ipaddr.IPv4).toIPv4MappedAddress());
    else if ((address as ipaddr.IPv6).isIPv4MappedAddress()) forms.push((address as ipaddr.IPv6).toIPv4Address());
    return forms.some((a) => this.allow.some((c) => inCidr(a, c)));
  }

  /** Judges one address (any spelling parseIpLiteral accepts, or a parsed address). */
  check(address: string | Address): AddressVerdict {
    const parsed = typeof address === 'string' ? parseIpLiteral(address) : address;
    if (parsed === null) return { allowed: false, reason: 'not an IP address' };
    if (isCloudMetadata(parsed)) return { allowed: false, reason: 'a cloud metadata address' };
    if (this.allowListed(parsed)) return { allowed: true };
    const reason = refusalReason(parsed);
    return reason === null ? { allowed: true } : { allowed: false, reason };
  }
}
