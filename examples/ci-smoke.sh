#!/bin/sh
# CI smoke test against a deployed Redis: a deduct round trip on a throwaway item, checking
# statuses and exit codes. Usage: STOCKCTL_URL=redis://host:6379 examples/ci-smoke.sh
set -eu
stockctl=${STOCKCTL:-stockctl}
sku="ci-smoke-$$"
prefix="ci-smoke:"

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
