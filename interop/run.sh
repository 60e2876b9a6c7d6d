#!/usr/bin/env bash
# Interop suites: the official A2A SDKs against `a2abridge serve`, and our
# own client SDK and CLI against `a2abridge serve` and the SDKs' servers.
#   (npm ci in interop/js runs first: the Go suite starts the JS peer too)
#   interop/go  a2a-go client (nested Go module, builds ../../cmd/a2abridge),
#               the a2a-go peer, and our client + CLI against a2abridge, the
#               a2a-go peer and the JS peer (TestOurClient)
#   interop/js  @a2a-js/sdk client (node --test, builds the binary with go)
# Both suites always run; the exit status is non-zero if either failed.
# Needs only Go and Node.js/npm (registry access for go modules and npm ci).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

for tool in go node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "interop: $tool not found on PATH" >&2
		exit 2
	fi
done

failed=()

run_suite() {
	local name=$1 dir=$2
	shift 2
	echo "=== interop: $name ($(cd "$dir" && pwd))"
	local start=$SECONDS
	if (cd "$dir" && "$@"); then
		echo "=== interop: $name passed in $((SECONDS - start))s"
	else
		echo "=== interop: $name FAILED in $((SECONDS - start))s"
		failed+=("$name")
	fi
}

# Before the Go suite, which runs our client against the JS peer
# (js/peer-server.mjs); without js/node_modules it skips that peer.
run_suite "js dependencies (npm ci)" "$here/js" npm ci --no-audit --no-fund
# The scenarios mostly wait on slow tasks and streams: run more of them at
# once than GOMAXPROCS (the default -parallel) allows on small machines.
run_suite "go (a2a-go; our client and CLI vs a2abridge, a2a-go, JS)" "$here/go" go test -count=1 -parallel 8 ./...
run_suite "js (@a2a-js/sdk)" "$here/js" node --test

if ((${#failed[@]})); then
	echo "interop: failed: ${failed[*]}" >&2
	exit 1
fi
echo "interop: all suites passed"
