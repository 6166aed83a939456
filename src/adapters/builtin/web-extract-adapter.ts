// The web_extract builtin: one GET under the URL policy (src/net), pinned to the address it
// validated, bounded in bytes and time, turned into readable text. Preflight judges what needs no
// DNS (scheme, host name, literal addresses); the adapter resolves and judges every answer at step 7.
import { PageFetchError, UrlPolicyError } from '../../net/errors.js';
import { auditUrl, checkUrl } from '../../net/url-policy.js';
import { AdapterCheckError, type EffectAdapter } from '../adapter-types.js';

interface WebExtractInput {
  url: string;
  max_chars?: number;
}

/** Bytes of body read at most; the rest is never downloaded. */
const MAX_BYTES = 2 * 1024 * 1024;
/** A page fetch never takes longer than this, whatever the effect's deadline. */
const MAX_FETCH_MS = 30_000;
const DEFAULT_CHARS = 20_000;

function input(args: unknown): WebExtractInput {
  return args as WebExtractInput; // schema-validated by the runtime in step 1
}

export const webExtractAdapter: EffectAdapter = {
  preflight(_entry, args, env) {
    const a = input(args);
    try {
      checkUrl(a.url, env.network);
    } catch (err) {
      if (err instanceof UrlPolicyError) throw new AdapterCheckError(`url: ${err.message}`);
      throw err;
    }
    const where = auditUrl(a.url);
    return {
      checks: [],
      // The full URL is what is approved (hashed into the key); views keep only scheme, host, port.
      action: { kind: 'net.fetch', target: { url: a.url } },
      summary: `GET ${where}`,
      audit: { url: where },
    };
  },

  async invoke(_entry, args, env) {
    const a = input(args);
    const maxChars = a.max_chars ?? DEFAULT_CHARS;
    // The fetcher (undici) and the HTML reader (htmlparser2) load at the first fetch, not with
    // every session whose catalog lists this tool (issue 17).
    const [{ fetchPage }, { readableText }] = await Promise.all([import('../../net/fetch-page.js'), import('../../net/readable-text.js')]);
    try {
      const page = await fetchPage(a.url, {
        timeoutMs: Math.max(1, Math.min(env.deadlineMs, MAX_FETCH_MS)),
        maxBytes: MAX_BYTES,
        allow: env.network,
        signal: env.signal,
      });
      const html = /html|xml/i.test(page.contentType);
      const readable = html ? readableText(page.text) : { title: '', text: page.text };
      let body = readable.title ? `# ${readable.title}\n\n${readable.text}` : readable.text;
      const cut = body.length > maxChars;
      if (cut) body = `${body.slice(0, maxChars)}\n[cut at ${maxChars} characters]`;
      if (page.text === '' && !html) body = `[${page.contentType || 'unknown content type'}: not text, ${page.bytes} bytes not shown]`;
      return {
        text: `[HTTP ${page.status}] ${page.finalUrl}\n${body}`,
        isError: page.status >= 400,
        detail: {
          status: page.status,
          finalUrl: page.finalUrl,
          contentType: page.contentType,
          bytes: page.bytes,
          truncated: page.truncated || cut,
          redirects: page.redirects,
        },
      };
    } catch (err) {
      // A refusal or a network failure is the tool's answer to the model, with its stable code.
      if (err instanceof UrlPolicyError || err instanceof PageFetchError) {
        return { text: `[${err.code}] ${err.message}`, isError: true, detail: { code: err.code, url: auditUrl(a.url) } };
      }
      throw err;
    }
  },
};
