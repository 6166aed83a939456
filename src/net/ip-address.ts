// IP address text <-> bytes, and CIDR ranges. Strict on purpose: the only inputs are a WHATWG-normalised
// URL host, a resolver answer or an operator's allowlist entry, and each of those has one canonical
// form. Lenient IPv4 forms (0x7f.1, 0177.0.0.1) are the WHATWG URL parser's job, not ours.

export interface IpAddress {
  readonly family: 4 | 6;
  /** 4 bytes for IPv4, 16 for IPv6. */
  readonly bytes: Uint8Array;
  /** An IPv6 zone id (`fe80::1%eth0`), which only link-scoped addresses have. */
  readonly zone?: string;
}

export interface Cidr {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
  readonly prefix: number;
  /** The operator's text, for messages. */
  readonly text: string;
}

const DEC_OCTET = /^(?:0|[1-9]\d{0,2})$/;

/** Dotted-quad IPv4 only (no leading zeros, no hex, no short forms); null if it is not one. */
export function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!DEC_OCTET.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

const HEXTET = /^[0-9a-fA-F]{1,4}$/;

/** RFC 4291 text form, with an optional trailing dotted IPv4 and an optional `%zone`; null otherwise. */
export function parseIpv6(text: string): { bytes: Uint8Array; zone?: string } | null {
  let body = text;
  let zone: string | undefined;
  const pct = body.indexOf('%');
  if (pct !== -1) {
    zone = body.slice(pct + 1);
    body = body.slice(0, pct);
    if (zone.length === 0) return null;
  }
  const words: number[] = [];
  let tail: Uint8Array | null = null;
  const lastColon = body.lastIndexOf(':');
  if (lastColon === -1) return null;
  const last = body.slice(lastColon + 1);
  if (last.includes('.')) {
    tail = parseIpv4(last);
    if (!tail) return null;
    // "::1.2.3.4" keeps its "::"; "a:b:c:d:e:f:1.2.3.4" drops the colon before the dotted part.
    body = body[lastColon - 1] === ':' ? body.slice(0, lastColon + 1) : body.slice(0, lastColon);
  }
  const maxWords = tail ? 6 : 8;
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const parseSide = (side: string): number[] | null => {
    if (side === '') return [];
    const out: number[] = [];
    for (const w of side.split(':')) {
      if (!HEXTET.test(w)) return null;
      out.push(parseInt(w, 16));
    }
    return out;
  };
  const head = parseSide(halves[0]!);
  if (!head) return null;
  if (halves.length === 2) {
    const rest = parseSide(halves[1]!);
    if (!rest) return null;
    if (head.length + rest.length >= maxWords) return null;
    words.push(...head, ...new Array<number>(maxWords - head.length - rest.length).fill(0), ...rest);
  } else {
    if (head.length !== maxWords) return null;
    words.push(...head);
  }
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[i * 2] = w >> 8;
    bytes[i * 2 + 1] = w & 0xff;
  });
  if (tail) bytes.set(tail, 12);
  return zone === undefined ? { bytes } : { bytes, zone };
}

/** Parses an IP literal; IPv6 may be written in brackets (a URL host). Null if the text is not one. */
export function parseIp(text: string): IpAddress | null {
  const t = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const v4 = parseIpv4(t);
  if (v4) return { family: 4, bytes: v4 };
  const v6 = parseIpv6(t);
  if (v6) return v6.zone === undefined ? { family: 6, bytes: v6.bytes } : { family: 6, bytes: v6.bytes, zone: v6.zone };
  return null;
}

export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return Array.from(ip.bytes).join('.');
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push((ip.bytes[i]! << 8) | ip.bytes[i + 1]!);
  // Longest run of two or more zero words becomes "::" (RFC 5952).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  const text =
    best === -1 ? hex.join(':') : `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
  return ip.zone === undefined ? text : `${text}%${ip.zone}`;
}

/** The IPv4 address inside bytes[offset..offset+4], optionally bit-inverted (Teredo's client field). */
export function ipv4At(bytes: Uint8Array, offset: number, invert = false): IpAddress {
  const out = bytes.slice(offset, offset + 4);
  if (invert) for (let i = 0; i < 4; i++) out[i] = ~out[i]! & 0xff;
  return { family: 4, bytes: out };
}

/** `a.b.c.d/n`, `x::/n`, or a bare address (a /32 or /128). Throws a plain Error naming the fault. */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  const addrText = slash === -1 ? text : text.slice(0, slash);
  const ip = parseIp(addrText);
  if (!ip || ip.zone !== undefined) {
    throw new Error(`'${text}' is not an IP address or CIDR range (write e.g. 10.0.0.0/8 or fd00::/8)`);
  }
  const max = ip.family === 4 ? 32 : 128;
  let prefix = max;
  if (slash !== -1) {
    const p = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) {
      throw new Error(`'${text}' has a prefix length outside 0..${max}`);
    }
    prefix = Number(p);
  }
  return { family: ip.family, bytes: ip.bytes, prefix, text };
}

export function inCidr(ip: IpAddress, cidr: Cidr): boolean {
  if (ip.family !== cidr.family) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip.bytes[i]! & mask) !== (cidr.bytes[i]! & mask)) return false;
  }
  return true;
}
