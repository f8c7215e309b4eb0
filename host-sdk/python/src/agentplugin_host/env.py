"""The environment of a plugin process: an allowlist, never the host's
whole environment."""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from .version import ENV_LOG_LEVEL

#: What every plugin inherits from the host's environment: enough to run,
#: resolve, reach proxies and verify TLS — and nothing that usually holds a
#: secret. Patterns ending in "*" match a prefix. The same list as the Go
#: host SDK's.
BASE_ENV_ALLOW: tuple[str, ...] = (
    "PATH", "HOME", "TMPDIR", "TMP", "TEMP", "USER", "LANG", "LC_*", "TZ",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR",
    "GOCOVERDIR",  # coverage of plugin subprocesses under go test -cover
    "SystemRoot",  # Windows networking needs it
    ENV_LOG_LEVEL,
)


def env_match(pattern: str, name: str) -> bool:
    """Whether the variable name matches pattern: an exact name, or a prefix
    followed by "*" (a lone "*" matches nothing)."""
    if pattern.endswith("*"):
        prefix = pattern[:-1]
        return prefix != "" and name.startswith(prefix)
    return name == pattern


def build_env(
    environ: Mapping[str, str],
    allow: Iterable[str] = (),
    declared_prefixes: Iterable[str] = (),
    extra: Optional[Mapping[str, str]] = None,
    log_level: str = "",
) -> dict[str, str]:
    """The whole environment of a plugin process: the variables of environ
    that match BASE_ENV_ALLOW, allow or a prefix the plugin declared in
    DescribeResponse.env_prefixes, then extra (which wins), then the log
    level. An empty declared prefix is ignored: it would let everything
    through."""
    patterns = list(BASE_ENV_ALLOW) + list(allow)
    patterns += [p + "*" for p in declared_prefixes if p]
    out = {k: v for k, v in environ.items() if k and any(env_match(p, k) for p in patterns)}
    if extra:
        out.update(extra)
    if log_level:
        out[ENV_LOG_LEVEL] = log_level
    return dict(sorted(out.items()))
