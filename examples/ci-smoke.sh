#!/bin/sh
# CI smoke test against a deployed Redis: first doctor --strict (the server is set up not to
# lose, evict or corrupt stock), then a deduct round trip on a throwaway item, checking statuses
# and exit codes. Usage: STOCKCTL_URL=redis://host:6379 examples/ci-smoke.sh
# (CI_SMOKE_DOCTOR=0 skips doctor, for a throwaway server without persistence or replicas.)
set -eu
stockctl=${STOCKCTL:-stockctl}
sku="ci-smoke-$$"
prefix="ci-smoke:"

if [ "${CI_SMOKE_DOCTOR:-1}" != 0 ] && ! $stockctl doctor --strict >/dev/null; then
  echo "ci-smoke: doctor found a problem; run stockctl doctor for the findings" >&2
  exit 1
fi

$stockctl --prefix "$prefix" init "$sku" 1 --force --ttl 300 >/dev/null
$stockctl --prefix "$prefix" deduct "$sku" 1 | grep -q '"status":"ok","stock":0'
# The second deduction must be refused (exit 3), never oversold.
if $stockctl --prefix "$prefix" deduct "$sku" 1 >/dev/null; then
  echo "ci-smoke: oversold $sku" >&2
  exit 1
elif [ $? -ne 3 ]; then
  echo "ci-smoke: unexpected exit status" >&2
  exit 1
fi
$stockctl --prefix "$prefix" add "$sku" 1 | grep -q '"stock":1'
echo "ci-smoke: ok"
