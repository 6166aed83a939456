// The URL policy, step two: one DNS lookup, every answer judged, one address chosen. The chosen address
// is the only one a connection for this request may use (pinned-agent.ts), so a resolver that answers
// differently a moment later (DNS rebinding) is never asked again for this request.
import { lookup as dnsLookup } from 'node:dns/promises';
import { UrlPolicyError } from './errors.js';
import { formatIp, type IpAddress } from './ip-address.js';
import { type CheckedUrl, type CompiledAllowlist, type NetAllowlist, checkAddress, checkUrl, compileAllowlist } from './url-policy.js';

export interface DnsAnswer {
  readonly address: string;
  readonly family: number;
}
/** Resolves a host name to all its addresses. Tests inject their own; the default asks the OS. */
export type DnsLookup = (hostname: string) => Promise<readonly DnsAnswer[]>;

export const systemLookup: DnsLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface PinnedTarget extends CheckedUrl {
  /** The validated address every connection for this request dials. */
  readonly address: string;
  readonly family: 4 | 6;
}

export interface ResolveOptions {
  readonly lookup?: DnsLookup;
  readonly allow?: NetAllowlist | CompiledAllowlist;
  readonly signal?: AbortSignal;
}

function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Checks the URL, resolves its host once, judges every answer and pins the first. Throws UrlPolicyError. */
export async function resolvePinnedTarget(input: string | URL, options: ResolveOptions = {}): Promise<PinnedTarget> {
  const allow = compileAllowlist(options.allow);
  const checked = checkUrl(input, allow);
  if (checked.literal) return pin(checked, checked.literal);
  const lookup = options.lookup ?? systemLookup;
  let answers: readonly DnsAnswer[];
  try {
    answers = await abortable(lookup(checked.hostname), options.signal);
  } catch (err) {
    if (options.signal?.aborted) throw err;
    const code = (err as { code?: unknown }).code;
    throw new UrlPolicyError(
      'url.dns_failed',
      `${checked.audit}: resolving '${checked.hostname}' failed${typeof code === 'string' ? ` (${code})` : ''}; the request was not sent`,
      { cause: err },
    );
  }
  if (!Array.isArray(answers) || answers.length === 0) {
    throw new UrlPolicyError('url.dns_empty', `${checked.audit}: '${checked.hostname}' resolved to no address; the request was not sent`);
  }
  // Every answer is judged, not only the chosen one: a name that also points inward is refused whole.
  const judged = answers.map((a, i) =>
    checked.hostAllowed
      ? checkAddressShape(a.address, checked.audit, i)
      : checkAddress(a.address, allow, `${checked.audit}: DNS answer ${i + 1} of ${answers.length} for '${checked.hostname}'`),
  );
  return pin(checked, judged[0]!);
}

// Names the operator allowed may resolve anywhere, but an answer must still be an address.
const ANY_ADDRESS = compileAllowlist({ cidrs: ['0.0.0.0/0', '::/0'] });
function checkAddressShape(address: string, audit: string, i: number): IpAddress {
  return checkAddress(address, ANY_ADDRESS, `${audit}: DNS answer ${i + 1}`);
}

function pin(checked: CheckedUrl, ip: IpAddress): PinnedTarget {
  return { ...checked, address: formatIp(ip), family: ip.family };
}
