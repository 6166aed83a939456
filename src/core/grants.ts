// Capability grants in core files. There is one grammar and one matcher: the policy layer's
// (src/policy/capability.ts), which is also what dispatch uses, so whatever a core loads with is
// exactly what its effects are checked against. The loader adds only what a file must not say:
// a bare '*' that grants everything, and text that is not written in its canonical form.
import { CapabilitySyntaxError, grantAllows, parseCapability, type Capability } from '../policy/capability.js';

export type GrantCheck = { readonly ok: true; readonly capability: Capability } | { readonly ok: false; readonly message: string };

/**
 * Checks one grant (or approval-rule capability pattern) as written in a core file. `exact`
 * refuses wildcards, for places where a pattern makes no sense (a tool's dispatch capability).
 */
export function checkGrant(text: string, opts: { exact?: boolean } = {}): GrantCheck {
  if (typeof text === 'string' && text.startsWith('*')) {
    return { ok: false, message: `capability ${JSON.stringify(text.slice(0, 80))} starts with a wildcard and would grant every namespace; name the namespace, e.g. "terminal.*" or "mcp.connect:*"` };
  }
  let cap: Capability;
  try {
    cap = parseCapability(text, 'grant');
  } catch (err) {
    if (err instanceof CapabilitySyntaxError) return { ok: false, message: err.message };
    throw err;
  }
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
  if (cap.text !== text && cap.text !== text.replace(/\*\*$/, '*')) {
    // Trimmed or Unicode-normalized: the file should say what is granted, byte for byte.
    return { ok: false, message: `capability ${shown} is not written in canonical form; write it as ${JSON.stringify(cap.text)}` };
  }
  if (opts.exact === true && cap.wildcard) {
    return { ok: false, message: `capability ${shown} is a wildcard, but this capability must be exact; name one capability, e.g. "tool.call:word_count"` };
  }
  return { ok: true, capability: cap };
}

/**
 * True when grant `pattern` authorizes requirement `capability`, with dispatch's own rule (whole
 * segments, prefix wildcards, secrets only by the exact grant). The loader uses it to stop a tool
 * listing its own dispatch gate. Text that does not parse covers nothing.
 */
export function grantCovers(pattern: string, capability: string): boolean {
  try {
    return grantAllows(parseCapability(pattern, 'grant'), parseCapability(capability, 'requirement'));
  } catch (err) {
    if (err instanceof CapabilitySyntaxError) return false;
    throw err;
  }
}
