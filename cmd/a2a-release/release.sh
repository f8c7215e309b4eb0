#!/usr/bin/env bash
# Builds a release into $DIST: what `make release VERSION=vX.Y.Z` runs
# (docs/releasing.md). The Makefile passes every variable below.
#
#   VERSION   vMAJOR.MINOR.PATCH (or with a pre-release: v1.2.0-rc.1)
#   DIST      the output directory (emptied first)
#   PROGRAMS  the programs under cmd/ every archive carries
#   TARGETS   GOOS/GOARCH pairs
#   GO PY NODE NPM  the toolchains; CYCLONEDX the pinned SBOM tool
#
# Reproducible: the same commit gives the same bytes (make test-release
# builds twice and compares SHA256SUMS). Every time stamp is the commit's
# (SOURCE_DATE_EPOCH), binaries carry no build id and no paths.
set -euo pipefail
: "${VERSION:?}" "${DIST:?}" "${PROGRAMS:?}" "${TARGETS:?}" "${CYCLONEDX:?}"
GO=${GO:-go} PY=${PY:-/usr/bin/python3} NODE=${NODE:-node} NPM=${NPM:-npm}

case "$VERSION" in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "release: VERSION=$VERSION is not a release version: give vMAJOR.MINOR.PATCH, e.g. make release VERSION=v0.2.0" >&2; exit 2 ;;
esac
plain=${VERSION#v}                        # 1.2.0-rc.1: npm
case "$plain" in
*-alpha.*|*-a.*) pyver="${plain%%-*}a${plain##*.}" ;;
*-beta.*|*-b.*) pyver="${plain%%-*}b${plain##*.}" ;;
*-rc.*) pyver="${plain%%-*}rc${plain##*.}" ;;
*-*) echo "release: pre-release $plain: use -alpha.N, -beta.N or -rc.N (Python needs one of them)" >&2; exit 2 ;;
*) pyver=$plain ;;
esac

commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then commit="$commit-dirty"; fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export TZ=UTC LC_ALL=C
mod=$($GO list -m)
ldflags="-s -w -buildid= -X $mod/internal/version.version=$VERSION -X $mod/internal/version.commit=$commit"

rm -rf "$DIST"
mkdir -p "$DIST/sbom"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$GO build -trimpath -o "$work/a2a-release" ./cmd/a2a-release
pack() { "$work/a2a-release" "$@"; }

pkgs=()
for p in $PROGRAMS; do pkgs+=("./cmd/$p"); done
for t in $TARGETS; do
  os=${t%/*} arch=${t#*/} ext=
  [ "$os" = windows ] && ext=.exe
  bindir=$work/bin/$os-$arch
  mkdir -p "$bindir"
  echo "release: building ${PROGRAMS// /, } for $os/$arch"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch $GO build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$bindir/" "${pkgs[@]}"
  name=a2a-plugin_${VERSION}_${os}_${arch}
  files=()
  for p in $PROGRAMS; do files+=("$bindir/$p$ext"); done
  format=tar.gz
  [ "$os" = windows ] && format=zip
  pack archive -o "$DIST/$name.$format" -root "$name" -epoch "$SOURCE_DATE_EPOCH" "${files[@]}" LICENSE README.md CHANGELOG.md
  for p in $PROGRAMS; do
    # GOOS/GOARCH: the tool writes them into every purl from go env.
    GOOS=$os GOARCH=$arch "$CYCLONEDX" bin -json -noserial -notimestamp -version "$VERSION" \
      -output "$DIST/sbom/${p}_${VERSION}_${os}_${arch}.cdx.json" "$bindir/$p$ext" 2>"$work/sbom.log" ||
      { cat "$work/sbom.log" >&2; exit 1; }
  done
  # The plugin binary alone, per target, for the host packages.
  mkdir -p "$work/plugin-bin/$os-$arch"
  cp "$bindir/a2a-plugin$ext" "$work/plugin-bin/$os-$arch/"
done

# Hermes: the plugin, the Python host library it vendors, the plugin binary
# of every target and install.py, which picks the machine's binary.
echo "release: the Hermes plugin archive"
hermes=a2a-plugin-hermes_${VERSION}
pack archive -o "$DIST/$hermes.tar.gz" -root "$hermes" -epoch "$SOURCE_DATE_EPOCH" \
  host-sdk/hermes/install.py host-sdk/hermes/a2a-plugin=a2a-plugin \
  host-sdk/python/src/agentplugin=python/agentplugin host-sdk/python/src/agentplugin_host=python/agentplugin_host \
  "$work/plugin-bin=bin" LICENSE CHANGELOG.md

# OpenClaw: one npm package with the binary of every target; the plugin
# picks bin/<platform>-<arch>/ at run time (host-sdk/openclaw/src/ids.ts).
echo "release: the OpenClaw plugin package"
$NODE host-sdk/openclaw/scripts/stage.mjs "$work/plugin-bin" "$work/openclaw" --version "$plain" --bundle
(cd "$work/openclaw" && $NPM pack --silent --pack-destination "$DIST" >/dev/null)

# Node host library: npm pack of host-sdk/node (its dist/ with the types).
echo "release: the Node host library package"
mkdir -p "$work/node"
cp -r host-sdk/node/package.json host-sdk/node/dist host-sdk/node/examples "$work/node/"
[ -f host-sdk/node/README.md ] && cp host-sdk/node/README.md "$work/node/"
cp LICENSE "$work/node/"
(cd "$work/node" && $NPM pkg set version="$plain" && $NPM pack --silent --pack-destination "$DIST" >/dev/null)

# Python host library: wheel and sdist with Debian's build, setuptools and
# wheel, no isolation (PyPI is out of reach).
echo "release: the Python host library wheel and sdist"
mkdir -p "$work/python"
cp -r host-sdk/python/pyproject.toml host-sdk/python/README.md host-sdk/python/src host-sdk/python/examples "$work/python/"
cp LICENSE "$work/python/"
printf 'graft examples\nglobal-exclude *.pyc\n' >"$work/python/MANIFEST.in"  # the sdist carries the example host
find "$work/python" -name __pycache__ -prune -exec rm -rf {} +
sed -i -E "s/^version = \".*\"$/version = \"$pyver\"/" "$work/python/pyproject.toml"
find "$work/python" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
(cd "$work/python" && $PY -m build --no-isolation --sdist --wheel --outdir "$DIST" . >"$work/pybuild.log" 2>&1) ||
  { cat "$work/pybuild.log" >&2; exit 1; }
# setuptools' sdist carries the build's time (gzip header, generated
# files): the same files again, re-packed with fixed times and owners.
for sdist in "$DIST"/agentplugin*host-*.tar.gz; do
  base=$(basename "$sdist" .tar.gz)
  mkdir -p "$work/sdist" && tar -xzf "$sdist" -C "$work/sdist"
  pack archive -o "$sdist" -root "$base" -epoch "$SOURCE_DATE_EPOCH" "$work/sdist/$base"
done

pack sums "$DIST"
echo "release: $VERSION ($commit) in $DIST:"
(cd "$DIST" && ls -l --time-style=+ | sed 1d | awk '{print "  " $5 "\t" $NF}')
