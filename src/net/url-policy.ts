// The URL policy, step one: parse with the WHATWG URL parser (what an HTTP client connects to, with
// every IPv4 spelling — 0x7f000001, 0177.0.0.1, 127.1, 2130706433, trailing dots, full-width digits —
// already folded into one dotted quad), then judge the scheme, the host name and any literal address.
// DNS answers are judged by the same `checkAddress` in resolve.ts.
import { UrlPolicyError } from './errors.js';
import { type Cidr, type IpAddress, formatIp, inCidr, ipv4At, parseCidr, parseIp } from './ip-address.js';
import { classifyAddress } from './ip-ranges.js';

/**
 * What an operator opens explicitly; nothing else opens the gate.
 * - `hosts`: exact names (`wiki.corp.internal`) or `*.suffix` patterns. A named host passes the name
 *   rules, and whatever its DNS answers are, they are accepted: the operator vouches for the name.
 * - `cidrs`: ranges (`10.203.0.0/24`, `fd00:1::/64`, or one address) whose addresses are accepted,
 *   whether written as a literal in the URL or answered by DNS for a name that passed the name rules.
 */
export interface NetAllowlist {
  readonly hosts?: readonly string[];
  readonly cidrs?: readonly string[];
}

export interface CompiledAllowlist {
  readonly compiled: true;
  readonly hosts: ReadonlySet<string>;
  readonly suffixes: readonly string[];
  readonly cidrs: readonly Cidr[];
}

export interface CheckedUrl {
  readonly url: URL;
  /** The host without IPv6 brackets and without trailing dots: what SNI and the name rules use. */
  readonly hostname: string;
  /** Set when the host is an IP literal (already judged). */
  readonly literal: IpAddress | null;
  /** True when the operator's allowlist names this host. */
  readonly hostAllowed: boolean;
  /** scheme://host[:port], safe for logs. */
  readonly audit: string;
}

const ALLOWED_SCHEMES = new Set(['http:', 'https:']);

// Names that only ever mean "this machine" or "this site's network" (RFC 6761, RFC 6762, RFC 8375,
// ICANN's .internal), plus conventional private suffixes that a public resolver never answers.
const FORBIDDEN_SUFFIXES = ['localhost', 'local', 'internal', 'home.arpa', 'lan', 'localdomain'];
// Cloud metadata names, for a precise message; all are also caught by a suffix or the single-label rule.
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

const EMPTY_ALLOWLIST: CompiledAllowlist = { compiled: true, hosts: new Set(), suffixes: [], cidrs: [] };

function normaliseName(name: string): string {
  return name.toLowerCase().replace(/\.+$/, '');
}

/** Validates and normalises an allowlist once; pass the result around to avoid doing it per request. */
export function compileAllowlist(allow?: NetAllowlist | CompiledAllowlist): CompiledAllowlist {
  if (!allow) return EMPTY_ALLOWLIST;
  if ('compiled' in allow) return allow;
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  (allow.hosts ?? []).forEach((entry, i) => {
    const where = `allow.hosts[${i}]`;
    const wildcard = entry.startsWith('*.');
    const bare = wildcard ? entry.slice(2) : entry;
    let host: string;
    try {
      host = new URL(`http://${bare}/`).hostname;
    } catch {
      throw new UrlPolicyError('url.allowlist_invalid', `${where} '${entry}' is not a host name (write e.g. wiki.corp.internal or *.corp.internal)`);
    }
    if (parseIp(host)) {
      throw new UrlPolicyError('url.allowlist_invalid', `${where} '${entry}' is an IP address; put addresses in allow.cidrs`);
    }
    if (wildcard) suffixes.push(normaliseName(host));
    else hosts.add(normaliseName(host));
  });
  const cidrs = (allow.cidrs ?? []).map((entry, i) => {
    try {
      return parseCidr(entry);
    } catch (err) {
      throw new UrlPolicyError('url.allowlist_invalid', `allow.cidrs[${i}]: ${(err as Error).message}`);
    }
  });
  return { compiled: true, hosts, suffixes, cidrs };
}

function hostIsAllowed(hostname: string, allow: CompiledAllowlist): boolean {
  if (allow.hosts.has(hostname)) return true;
  return allow.suffixes.some((s) => hostname.endsWith(`.${s}`));
}

/** True when an allowlisted range holds the address (an IPv4-mapped address also matches as IPv4). */
function addressIsAllowed(ip: IpAddress, allow: CompiledAllowlist): boolean {
  if (allow.cidrs.some((c) => inCidr(ip, c))) return true;
  if (ip.family === 6 && ip.zone === undefined && inCidr(ip, MAPPED)) {
    const v4 = ipv4At(ip.bytes, 12);
    return allow.cidrs.some((c) => inCidr(v4, c));
  }
  return false;
}
const MAPPED = parseCidr('::ffff:0:0/96');

/** scheme://host[:port] — no userinfo, path, query or fragment. Never throws. */
export function auditUrl(input: string | URL): string {
  let url: URL;
  try {
    url = typeof input === 'string' ? new URL(input) : input;
  } catch {
    return '(invalid URL)';
  }
  return url.host ? `${url.protocol}//${url.host}` : url.protocol;
}

/**
 * Judges one address (a URL literal or a DNS answer). `subject` names it in messages.
 * Throws url.address_forbidden unless it is public, or the operator allowed it.
 */
export function checkAddress(address: string | IpAddress, allow: CompiledAllowlist, subject: string): IpAddress {
  const ip = typeof address === 'string' ? parseIp(address) : address;
  if (!ip) {
    throw new UrlPolicyError('url.address_forbidden', `${subject}: '${String(address)}' is not an IP address`);
  }
  if (addressIsAllowed(ip, allow)) return ip;
  const verdict = classifyAddress(ip);
  if (verdict.forbidden) {
    throw new UrlPolicyError(
      'url.address_forbidden',
      `${subject}: ${formatIp(ip)} is ${verdict.rule}; only public addresses are allowed unless the operator lists a range in allow.cidrs`,
    );
  }
  return ip;
}

/** Parses and judges a URL before any DNS lookup; throws UrlPolicyError. */
export function checkUrl(input: string | URL, allowInput?: NetAllowlist | CompiledAllowlist): CheckedUrl {
  const allow = compileAllowlist(allowInput);
  let url: URL;
  try {
    url = new URL(typeof input === 'string' ? input : input.href);
  } catch (err) {
    // The input is not echoed: it may carry userinfo.
    throw new UrlPolicyError('url.invalid', 'the URL does not parse as a WHATWG URL (absolute http or https URL expected)', { cause: err });
  }
  const audit = auditUrl(url);
  if (!ALLOWED_SCHEMES.has(url.protocol)) {
    throw new UrlPolicyError('url.scheme', `${audit}: scheme '${url.protocol.slice(0, -1)}' is not allowed; only http and https are`);
  }
  const literal = parseIp(url.hostname);
  if (literal) {
    checkAddress(literal, allow, audit);
    return { url, hostname: formatIp(literal), literal, hostAllowed: false, audit };
  }
  const hostname = normaliseName(url.hostname);
  if (hostname === '') throw new UrlPolicyError('url.invalid', `${audit}: the URL has no host`);
  if (hostIsAllowed(hostname, allow)) return { url, hostname, literal: null, hostAllowed: true, audit };
  const refuse = (rule: string): never => {
    throw new UrlPolicyError('url.host_forbidden', `${audit}: host '${hostname}' is ${rule}; the operator can allow it by name in allow.hosts`);
  };
  if (METADATA_HOSTS.has(hostname)) refuse('a cloud metadata service name');
  for (const s of FORBIDDEN_SUFFIXES) {
    if (hostname === s || hostname.endsWith(`.${s}`)) refuse(`a local or internal name (*.${s})`);
  }
  if (!hostname.includes('.')) refuse('a single-label name, which only a local resolver answers');
  return { url, hostname, literal: null, hostAllowed: false, audit };
}
