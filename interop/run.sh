#!/usr/bin/env bash
# Interop suites: the official A2A SDKs against `a2abridge serve`, and our
# own client SDK and CLI against `a2abridge serve` and the SDKs' servers.
#   (npm ci in interop/js runs first: the Go suite starts the JS peer too)
#   interop/go  a2a-go client (nested Go module, builds ../../cmd/a2abridge),
#               the a2a-go peer, and our client + CLI against a2abridge, the
#               a2a-go peer and the JS peer (TestOurClient, A2A 0.3), and over
#               A2A 1.0 (JSON-RPC and REST) against a2abridge and the 1.x SDK
#               peers, default and --compat (TestOurClientV1)
#               and the `a2a` bridge kind (bridge/remote, hosted in the test)
#               in front of the JS 1.3.0 and a2a-go v0.3.15 peers, called by
#               the a2a-go v2/v0.3 clients and, through js/bridge-clients.mjs,
#               the JS 1.3.0/0.3.14 clients (TestBridgeRemote), and the
#               gateway as a user runs it: `a2abridge serve --config` with an
#               admin block, an http agent (python/backend.py, a Python
#               standard-library service) and an a2a agent (the JS 1.3.0 peer)
#               registered with curl through the admin API, called by the
#               a2a-go v2 client and with curl through /simple/{agent}
#               (TestGateway; skipped without curl or python3, failed under CI)
#               and the conversation bridge and pairs (TestConversation): a
#               named scenario with an a2a participant (the JS 1.3.0 peer) and
#               an http participant, driven by the a2a-go v2/v0.3 clients and,
#               through js/conversation-clients.mjs, the JS 1.3.0/0.3.14
#               clients; a pair with a Go side and a JS side; bad ad-hoc
#               scenarios
#   interop/js  @a2a-js/sdk client (node --test, builds the binary with go);
#               signing.test.mjs: Agent Card signatures with @a2a-js/sdk
#               1.3.0, both ways
# and the A2A 1.0 suites (a2a-go v2 client: go/v1_client_test.go; @a2a-js/sdk
# 1.3.0 client: js/v1.test.mjs), each run against its SDK peers
# (go/cmd/peer-a2agov2, js/peer-server-v1.mjs, also with --grpc: gRPC alone),
# against `a2abridge serve` (JSON-RPC, HTTP+JSON and gRPC), and against three
# `a2abridge serve --replica` on one PostgreSQL schema behind nginx (the
# a2abridge-replicas target: consecutive calls land on different replicas,
# gRPC through nginx's grpc_pass in the JS suite; needs PostgreSQL, psql and
# nginx, which .ci/run provides; skipped without them, failed under CI).
# The gRPC servers of both SDKs are also called by our client, CLI, `a2a`
# bridge and `check` (interop/README.md, "gRPC").
# All suites always run; the exit status is non-zero if any failed.
# Needs Go and Node.js/npm (registry access for go modules and npm ci), and
# curl and python3 for TestGateway.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

for tool in go node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "interop: $tool not found on PATH" >&2
		exit 2
	fi
done

# Under CI (the CI variable set) TestGateway must run: a missing curl or
# python3 is installed from Debian's packages, and the test fails if it is
# still missing. Elsewhere the test is skipped with a warning.
for tool in curl python3; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		if [ -n "${CI:-}" ] && command -v apt-get >/dev/null 2>&1; then
			pkg=$tool
			echo "interop: $tool not found on PATH: installing Debian's $pkg" >&2
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
		else
			echo "interop: warning: $tool not found on PATH: TestGateway will be skipped (under CI it fails)" >&2
		fi
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

# js_tests_except_v1 runs node --test on every js/*.test.mjs but the A2A 1.0 suite.
js_tests_except_v1() {
	local files=() f
	for f in *.test.mjs; do
		[[ $f == v1.test.mjs ]] || files+=("$f")
	done
	node --test "${files[@]}"
}

v1_target="SDK peers and a2abridge serve"

# Before the Go suites, which run our client against the JS peer
# (js/peer-server.mjs) and the a2a-go v2 client against the JS 1.0 peer
# (js/peer-server-v1.mjs); without js/node_modules they skip those peers.
run_suite "js dependencies (npm ci)" "$here/js" npm ci --no-audit --no-fund
# The scenarios mostly wait on slow tasks and streams: run more of them at
# once than GOMAXPROCS (the default -parallel) allows on small machines.
run_suite "go (a2a-go; our client and CLI vs a2abridge, a2a-go, JS)" "$here/go" go test -count=1 -parallel 8 -skip '^TestV1Client' ./...
run_suite "go A2A 1.0 (a2a-go v2 client vs $v1_target)" "$here/go" go test -count=1 -parallel 8 -run '^TestV1Client' ./...
run_suite "js (@a2a-js/sdk)" "$here/js" js_tests_except_v1
run_suite "js A2A 1.0 (@a2a-js/sdk 1.3.0 client vs $v1_target)" "$here/js" node --test v1.test.mjs

if ((${#failed[@]})); then
	echo "interop: failed: ${failed[*]}" >&2
	exit 1
fi
echo "interop: all suites passed"
