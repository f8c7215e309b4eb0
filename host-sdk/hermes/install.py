"""Install the a2a-plugin Hermes plugin into a HERMES_HOME (what
``make hermes-plugin HERMES_HOME=…`` runs):

    $HERMES_HOME/plugins/a2a-plugin/
        plugin.yaml, __init__.py, …   the plugin (host-sdk/hermes/a2a-plugin)
        vendor/agentplugin_host/      the Python host SDK (host-sdk/python/src)
        vendor/agentplugin/           the contract's generated code
        bin/a2a-plugin                the binary

From a release archive (a2a-plugin-hermes_<version>.tar.gz, make release),
where the host library sits in python/ and the binary of every target in
bin/<goos>-<goarch>/, --binary may be left out: the machine's is picked.

An earlier installation is replaced (its bin/ and vendor/ included); the
plugin's data (plugin-data/) is not touched. Prints the config.yaml lines
that enable it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN_SRC = os.path.join(HERE, "a2a-plugin")
SDK_SRC = os.path.join(HERE, "..", "python", "src")
if not os.path.isdir(SDK_SRC):  # a release archive
    SDK_SRC = os.path.join(HERE, "python")
NAME = "a2a-plugin"
# Go's names for this machine's platform and CPU, as a release lays out bin/.
GOOS = {"linux": "linux", "darwin": "darwin", "win32": "windows"}
GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def release_binary() -> str:
    """The binary for this machine in a release archive's bin/."""
    import platform
    goos, goarch = GOOS.get(sys.platform), GOARCH.get(platform.machine().lower())
    exe = ".exe" if goos == "windows" else ""
    path = os.path.join(HERE, "bin", f"{goos}-{goarch}", "a2a-plugin" + exe)
    if goos is None or goarch is None or not os.path.isfile(path):
        raise SystemExit(f"install: no a2a-plugin binary for {sys.platform}/{platform.machine()} in {os.path.join(HERE, 'bin')}: "
                         "give one with --binary (make build, or the archive for your machine)")
    return path

CONFIG_LINES = """\
# Merge into {config}:
plugins:
  enabled: [a2a-plugin]
  disabled: [a2a-platform]   # Hermes' bundled A2A plugin; a2a-plugin would replace its tools and platform
  entries:
    a2a-plugin:
      settings:
        a2a:                 # the binary's settings (README: Configuration); A2A_* variables win
          port: 41241
gateway:
  platforms:
    a2a:
      enabled: true          # the gateway serves inbound A2A
platform_toolsets:
  a2a: [web, a2a]            # what a local (loopback) caller's turn may use; peers' trust tiers narrow it
  cli: [hermes-cli, a2a]     # the a2a_* tools in the CLI too (Hermes keeps the a2a toolset off unless listed)
tools:
  tool_search:
    enabled: false           # else the model sees tool_search, not the a2a_* tools (plugin tools sit behind it)
"""


def _ignore(_dir: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "__pycache__" or n.endswith((".pyc", ".pyo"))]


def install(hermes_home: str, binary: str) -> str:
    """Lay the plugin out under hermes_home; returns its directory."""
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"install: {binary} is not an executable a2a-plugin binary (run make build)")
    dest = os.path.join(os.path.abspath(os.path.expanduser(hermes_home)), "plugins", NAME)
    tmp = dest + ".installing"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(PLUGIN_SRC, tmp, ignore=_ignore)
    for pkg in ("agentplugin", "agentplugin_host"):
        shutil.copytree(os.path.join(SDK_SRC, pkg), os.path.join(tmp, "vendor", pkg), ignore=_ignore)
    os.makedirs(os.path.join(tmp, "bin"))
    shutil.copy2(binary, os.path.join(tmp, "bin", "a2a-plugin"))
    os.chmod(os.path.join(tmp, "bin", "a2a-plugin"), 0o755)
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    return dest


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Install the a2a-plugin Hermes plugin into a HERMES_HOME.")
    ap.add_argument("--hermes-home", default=os.environ.get("HERMES_HOME") or "~/.hermes")
    ap.add_argument("--binary", help="the a2a-plugin binary to install (default: the machine's from a release archive's bin/)")
    ap.add_argument("--quiet", action="store_true", help="print only the plugin directory")
    args = ap.parse_args(argv)
    dest = install(args.hermes_home, args.binary or release_binary())
    if args.quiet:
        print(dest)
        return 0
    home = os.path.dirname(os.path.dirname(dest))
    print(f"installed the a2a-plugin Hermes plugin in {dest}")
    print()
    print(CONFIG_LINES.format(config=os.path.join(home, "config.yaml")))
    print("Hermes' Python needs grpcio and protobuf (cryptography already comes with Hermes), e.g.:")
    print("  <hermes venv>/bin/python -m pip install 'grpcio>=1.51' 'protobuf>=3.21'")
    print("Then restart the gateway (hermes gateway run); it logs 'a2a-plugin: serving A2A at http://…'.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
