// The net layer's API: the URL policy, the pinned dispatcher and the bounded page fetch.
export { UrlPolicyError, PageFetchError, type UrlPolicyCode, type PageFetchCode } from './errors.js';
export { type NetAllowlist, type CompiledAllowlist, type CheckedUrl, auditUrl, checkUrl, checkAddress, compileAllowlist } from './url-policy.js';
export { type DnsLookup, type DnsAnswer, type PinnedTarget, type ResolveOptions, resolvePinnedTarget, systemLookup } from './resolve.js';
export { type PinnedAgentOptions, createPinnedAgent } from './pinned-agent.js';
export { type FetchPageOptions, type PageResult, fetchPage } from './fetch-page.js';
export { type ReadableText, readableText, decodeEntities } from './readable-text.js';
export { classifyAddress, type AddressVerdict } from './ip-ranges.js';
export { parseIp, formatIp, parseCidr, type IpAddress, type Cidr } from './ip-address.js';
