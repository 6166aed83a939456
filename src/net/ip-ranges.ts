// Which addresses the supervisor may connect to on a model's behalf. Everything in the IANA IPv4 and
// IPv6 special-purpose address registries (RFC 6890 and its updates) is refused; IPv6 is further
// limited to global unicast (2000::/3), and every IPv6 form that carries an IPv4 address inside it is
// judged by that embedded address too, so a forbidden IPv4 host cannot be reached through a wrapper.
import { type Cidr, type IpAddress, formatIp, inCidr, ipv4At, parseCidr } from './ip-address.js';

export interface AddressVerdict {
  readonly forbidden: boolean;
  /** The rule that decided, e.g. "loopback (127.0.0.0/8)" or "global unicast". */
  readonly rule: string;
}

const table = (rows: ReadonlyArray<readonly [string, string]>): ReadonlyArray<readonly [Cidr, string]> =>
  rows.map(([cidr, name]) => [parseCidr(cidr), `${name} (${cidr})`] as const);

// Order matters only for the name in a message: the more specific row comes first.
const IPV4_FORBIDDEN = table([
  ['0.0.0.0/32', 'unspecified'],
  ['0.0.0.0/8', '"this network"'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata lives here)'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast'],
  ['192.168.0.0/16', 'private'],
  ['192.175.48.0/24', 'direct delegation AS112'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'limited broadcast'],
  ['240.0.0.0/4', 'reserved'],
]);

const IPV6_FORBIDDEN = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy prefix'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:db8::/32', 'documentation'],
  ['2001::/23', 'IETF protocol assignments'],
  ['2620:4f:8000::/48', 'direct delegation AS112'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing SIDs'],
  ['fc00::/7', 'unique local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
]);

const MAPPED = parseCidr('::ffff:0:0/96');
const COMPATIBLE = parseCidr('::/96');
const NAT64 = parseCidr('64:ff9b::/96');
const SIX_TO_FOUR = parseCidr('2002::/16');
const TEREDO = parseCidr('2001::/32');
const GLOBAL_UNICAST = parseCidr('2000::/3');

function classifyIpv4(ip: IpAddress): AddressVerdict {
  for (const [cidr, rule] of IPV4_FORBIDDEN) if (inCidr(ip, cidr)) return { forbidden: true, rule };
  return { forbidden: false, rule: 'public IPv4' };
}

/** An IPv6 wrapper is only as safe as the IPv4 address it carries. */
function embedded(wrapper: string, inner: IpAddress): AddressVerdict | null {
  const v = classifyIpv4(inner);
  return v.forbidden ? { forbidden: true, rule: `${wrapper} embedding ${formatIp(inner)}: ${v.rule}` } : null;
}

export function classifyAddress(ip: IpAddress): AddressVerdict {
  if (ip.family === 4) return classifyIpv4(ip);
  // A zone id only makes sense for link-scoped addresses, none of which are reachable publicly.
  if (ip.zone !== undefined) return { forbidden: true, rule: 'scoped address with a zone id' };
  const b = ip.bytes;
  if (inCidr(ip, MAPPED)) {
    return embedded('IPv4-mapped (::ffff:0:0/96)', ipv4At(b, 12)) ?? { forbidden: false, rule: 'IPv4-mapped public IPv4' };
  }
  if (inCidr(ip, COMPATIBLE)) {
    // :: and ::1 fall through to their own rows below. Nothing routes the deprecated form, so even a
    // public embedded address is refused; the embedded rule only makes the message precise.
    const t = b.subarray(12);
    if (!(t[0] === 0 && t[1] === 0 && t[2] === 0 && t[3]! <= 1)) {
      const rule = 'IPv4-compatible (::/96, deprecated)';
      return embedded(rule, ipv4At(b, 12)) ?? { forbidden: true, rule };
    }
  }
  if (inCidr(ip, NAT64)) {
    return embedded('NAT64 (64:ff9b::/96)', ipv4At(b, 12)) ?? { forbidden: false, rule: 'NAT64 of public IPv4' };
  }
  if (inCidr(ip, SIX_TO_FOUR)) {
    const v = embedded('6to4 (2002::/16)', ipv4At(b, 2));
    if (v) return v;
  }
  if (inCidr(ip, TEREDO)) {
    // Server address in bits 32..63; client address, bit-inverted, in bits 96..127 (RFC 4380).
    return (
      embedded('Teredo (2001::/32) server', ipv4At(b, 4)) ??
      embedded('Teredo (2001::/32) client', ipv4At(b, 12, true)) ?? { forbidden: false, rule: 'Teredo of public IPv4' }
    );
  }
  for (const [cidr, rule] of IPV6_FORBIDDEN) if (inCidr(ip, cidr)) return { forbidden: true, rule };
  if (!inCidr(ip, GLOBAL_UNICAST)) return { forbidden: true, rule: 'outside global unicast (2000::/3)' };
  return { forbidden: false, rule: 'global unicast IPv6' };
}
