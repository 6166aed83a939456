// The environment a child gets when the caller names none: a short allowlist, never the
// supervisor's whole environment (which may hold provider keys and other secrets).
export const BASE_ENV_ALLOWLIST = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'] as const;

export function allowlistedEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of BASE_ENV_ALLOWLIST) {
    const v = source[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}
