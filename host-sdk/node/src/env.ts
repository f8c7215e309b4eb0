// The environment of a plugin process: never the host's whole environment,
// only an allowlist (as host-sdk's Go env.go).
import { ENV_LOG_LEVEL } from "./contract.js";

/**
 * What every plugin inherits: enough to run, resolve, reach proxies and
 * verify TLS, and nothing that usually holds a secret. "X*" matches a prefix.
 */
export const BASE_ENV_ALLOW: readonly string[] = [
  "PATH", "HOME", "TMPDIR", "TMP", "TEMP", "USER", "LANG", "LC_*", "TZ",
  "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
  "http_proxy", "https_proxy", "no_proxy", "all_proxy",
  "SSL_CERT_FILE", "SSL_CERT_DIR",
  "GOCOVERDIR", "SystemRoot",
  ENV_LOG_LEVEL,
];

/** Whether name matches an exact name or a "PREFIX*" pattern. */
export function envMatch(pattern: string, name: string): boolean {
  if (pattern.endsWith("*")) {
    const prefix = pattern.slice(0, -1);
    return prefix !== "" && name.startsWith(prefix);
  }
  return name === pattern;
}

/**
 * The whole environment of a plugin process: the variables of environ that
 * match the base allowlist, allow or a declared prefix, then extra (which
 * wins), then the log level. An empty declared prefix is ignored.
 */
export function buildEnv(
  environ: NodeJS.ProcessEnv,
  allow: readonly string[],
  declaredPrefixes: readonly string[],
  extra: Record<string, string> | undefined,
  logLevel: string | undefined,
): Record<string, string> {
  const patterns = [...BASE_ENV_ALLOW, ...allow, ...declaredPrefixes.filter((p) => p !== "").map((p) => p + "*")];
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(environ)) {
    if (k && v !== undefined && patterns.some((p) => envMatch(p, k))) out[k] = v;
  }
  Object.assign(out, extra ?? {});
  if (logLevel) out[ENV_LOG_LEVEL] = logLevel;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Whether two environments are the same. */
export function sameEnv(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
