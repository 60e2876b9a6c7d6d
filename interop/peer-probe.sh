#!/usr/bin/env bash
# peer-probe.sh BASE — replays the wire probes behind the quirks table in
# interop/README.md against a running peer (or `a2abridge serve`), with curl,
# and prints each request and the raw response (status line, the headers that
# matter, body; long bodies cut). BASE is http://127.0.0.1:PORT.
#
#   (cd interop/go && go run ./cmd/peer-a2ago --addr 127.0.0.1:18181) &
#   node interop/js/peer-server.mjs --port 18182 &
#   bash interop/peer-probe.sh http://127.0.0.1:18181
#
# Needs curl and node (for picking ids out of JSON). Takes about 3 seconds.
# It leaves a canceled slow task behind, nothing running.
set -uo pipefail

base=${1:?usage: peer-probe.sh http://127.0.0.1:PORT}
echo_url=$base/a2a/echo
chat_url=$base/a2a/chat
slow_url=$base/a2a/slow
n=0

# show: status line, selected headers, then the body (cut at $MAX chars).
MAX=${MAX:-700}
show() {
	tr -d '\r' | awk -v max="$MAX" '
		!body && /^HTTP\//                                { print; next }
		!body && tolower($0) ~ /^(content-type|content-length|transfer-encoding|access-control-allow-origin|allow):/ { print; next }
		!body && /^$/                                     { body = 1; print; next }
		body                                              { out = out $0 "\n" }
		END { if (length(out) > max) out = substr(out, 1, max) "…[cut]\n"; printf "%s", out }'
	echo
}

# rpc URL METHOD PARAMS [curl args...]: one JSON-RPC call, printed.
rpc() {
	local url=$1 method=$2 params=$3
	shift 3
	n=$((n + 1))
	local body="{\"jsonrpc\":\"2.0\",\"id\":$n,\"method\":\"$method\",\"params\":$params}"
	echo "### POST ${url#"$base"} $method $params"
	curl -sS -i --max-time 15 -X POST "$url" -H 'Content-Type: application/json' "$@" -d "$body" | show
}

# raw WHAT URL [curl args...]: any request, printed under the title WHAT.
raw() {
	local what=$1 url=$2
	shift 2
	echo "### $what ${url#"$base"}"
	curl -sS -i --max-time 15 "$url" "$@" | show
}

# show_history URL TASKID: role, text and taskId of each message in the history.
show_history() {
	call "$1" tasks/get "{\"id\":\"$2\",\"historyLength\":100}" |
		pick 'r.result.history.map(m=>`${m.role}:${JSON.stringify(m.parts.map(p=>p.text).join(""))}${m.taskId?"":"(no taskId)"}`).join(" | ")'
	echo
}

# call URL METHOD PARAMS: one JSON-RPC call, quiet, prints the body.
call() {
	n=$((n + 1))
	curl -sS --max-time 15 -X POST "$1" -H 'Content-Type: application/json' \
		-d "{\"jsonrpc\":\"2.0\",\"id\":$n,\"method\":\"$2\",\"params\":$3}"
}

# pick EXPR: evaluates EXPR on the JSON-RPC response read from stdin (as r).
pick() {
	node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);process.stdout.write(String('"$1"'))})'
}

msg() { # msg TEXT [TASKID]: MessageSendParams JSON
	local extra=""
	[[ -n ${2:-} ]] && extra=",\"taskId\":\"$2\""
	echo "{\"message\":{\"kind\":\"message\",\"messageId\":\"$(node -e 'process.stdout.write(crypto.randomUUID())')\",\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"$1\"}]$extra}}"
}

echo "======== $base"

echo "==== agent card"
raw GET "$echo_url/.well-known/agent-card.json"
MAX=0 raw "GET (body cut)" "$base/.well-known/agent-card.json"
raw "OPTIONS (CORS preflight)" "$echo_url/.well-known/agent-card.json" -X OPTIONS -H 'Origin: http://x.test' -H 'Access-Control-Request-Method: GET'

echo "==== message/send, content types, HTTP statuses"
rpc "$echo_url" message/send "$(msg hello)"
raw "POST message/send with Content-Type: text/plain" "$echo_url" -X POST -H 'Content-Type: text/plain' \
	-d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"message/send\",\"params\":$(msg no-content-type)}"
raw "POST a truncated JSON body" "$echo_url" -X POST -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,'
raw "POST a JSON body that is not an object" "$echo_url" -X POST -H 'Content-Type: application/json' -d '[1]'
raw "GET the JSON-RPC endpoint" "$echo_url"
raw "POST with a trailing slash" "$echo_url/" -X POST -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}'
raw "POST to an unknown agent" "$base/a2a/nope" -X POST -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}'
rpc "$echo_url" no/such/method '{}'
raw "POST tasks/get without id (a notification)" "$echo_url" -X POST -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"x"}}'
raw "POST tasks/get with id 1.5" "$echo_url" -X POST -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1.5,"method":"tasks/get","params":{"id":"x"}}'
raw "POST tasks/get with jsonrpc 1.0" "$echo_url" -X POST -H 'Content-Type: application/json' -d '{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"id":"x"}}'
rpc "$echo_url" message/send '{"message":{"kind":"message","role":"user","parts":[{"kind":"text","text":"no messageId"}]}}'
rpc "$echo_url" message/send '{"message":{"kind":"message","messageId":"m-empty","role":"user","parts":[]}}'
big=$(mktemp)
trap 'rm -f "$big"' EXIT
node -e 'process.stdout.write(JSON.stringify({jsonrpc:"2.0",id:1,method:"message/send",params:{message:{kind:"message",messageId:crypto.randomUUID(),role:"user",parts:[{kind:"text",text:"a".repeat(150000)}]}}}))' >"$big"
MAX=200 raw "POST message/send with a 150 kB text part" "$echo_url" -X POST -H 'Content-Type: application/json' --data-binary "@$big"

echo "==== unknown task"
rpc "$echo_url" tasks/get '{"id":"no-such-task"}'
rpc "$echo_url" tasks/cancel '{"id":"no-such-task"}'
rpc "$echo_url" message/send "$(msg hi no-such-task)"

echo "==== tasks/get historyLength (echo task: history = [user message])"
done_task=$(call "$echo_url" message/send "$(msg finish)" | pick r.result.id)
rpc "$echo_url" tasks/get "{\"id\":\"$done_task\"}"
rpc "$echo_url" tasks/get "{\"id\":\"$done_task\",\"historyLength\":0}"
rpc "$echo_url" tasks/get "{\"id\":\"$done_task\",\"historyLength\":1}"
echo "### the echo task at another agent's endpoint"
rpc "$chat_url" tasks/get "{\"id\":\"$done_task\"}"

echo "==== terminal tasks"
rpc "$echo_url" tasks/cancel "{\"id\":\"$done_task\"}"
rpc "$echo_url" message/send "$(msg again "$done_task")"
rpc "$echo_url" message/stream "$(msg again "$done_task")" -N
rpc "$echo_url" tasks/resubscribe "{\"id\":\"$done_task\"}" -N
rpc "$echo_url" tasks/resubscribe '{"id":"no-such-task"}' -N

echo "==== streaming methods: envelope and params errors"
raw "POST message/stream with jsonrpc 1.0" "$echo_url" -X POST -N -H 'Content-Type: application/json' -d '{"jsonrpc":"1.0","id":1,"method":"message/stream","params":{}}'
raw "POST message/stream with params []" "$echo_url" -X POST -N -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"message/stream","params":[]}'
rpc "$echo_url" message/stream '{"message":{"kind":"message","role":"user","parts":[{"kind":"text","text":"no messageId"}]}}' -N

echo "==== message/stream (SSE framing)"
MAX=4000 rpc "$echo_url" message/stream "$(msg stream-me)" -N

echo "==== chat: history after two turns"
chat_task=$(call "$chat_url" message/send "$(msg hello)" | pick r.result.id)
MAX=300 rpc "$chat_url" message/send "$(msg 'how are you' "$chat_task")"
echo "### history after turn 2:"
show_history "$chat_url" "$chat_task"
echo "### tasks/get without historyLength: $(call "$chat_url" tasks/get "{\"id\":\"$chat_task\"}" | pick '`${(r.result.history??[]).length} messages in history`')"
echo "### tasks/get historyLength 0: $(call "$chat_url" tasks/get "{\"id\":\"$chat_task\",\"historyLength\":0}" | pick '`${(r.result.history??[]).length} messages in history`')"
echo
echo "### cancel of an input-required task (no execution running)"
MAX=300 rpc "$chat_url" tasks/cancel "{\"id\":\"$chat_task\"}"
echo "### history after the cancel:"
show_history "$chat_url" "$chat_task"

echo "==== slow: non-blocking send, message to a running task, resubscribe, cancel twice"
slow_task=$(call "$slow_url" message/send "$(msg 30 | sed 's/}}$/},"configuration":{"blocking":false}}/')" | pick r.result.id)
echo "### non-blocking message/send of slow 30 -> task $slow_task"
MAX=300 rpc "$slow_url" message/send "$(msg 5 "$slow_task" | sed 's/}}$/},"configuration":{"blocking":false}}/')"
MAX=1200 rpc "$slow_url" tasks/resubscribe "{\"id\":\"$slow_task\"}" -N --max-time 1.5 2>&1
MAX=300 rpc "$slow_url" tasks/cancel "{\"id\":\"$slow_task\"}"
MAX=300 rpc "$slow_url" tasks/cancel "{\"id\":\"$slow_task\"}"
rpc "$slow_url" tasks/resubscribe "{\"id\":\"$slow_task\"}" -N

echo "==== push notification configs"
rpc "$echo_url" tasks/pushNotificationConfig/set "{\"taskId\":\"$done_task\",\"pushNotificationConfig\":{\"url\":\"http://127.0.0.1:9/hook\",\"token\":\"t\"}}"
rpc "$echo_url" tasks/pushNotificationConfig/get "{\"id\":\"$done_task\"}"
rpc "$echo_url" tasks/pushNotificationConfig/list "{\"id\":\"$done_task\"}"
rpc "$echo_url" tasks/pushNotificationConfig/set '{"taskId":"no-such-task","pushNotificationConfig":{"url":"http://127.0.0.1:9/hook"}}'
rpc "$echo_url" tasks/pushNotificationConfig/get '{"id":"no-such-task","pushNotificationConfigId":"nope"}'
rpc "$echo_url" agent/getAuthenticatedExtendedCard '{}'

echo "==== methods outside A2A 0.3.0"
MAX=300 rpc "$echo_url" tasks/list '{}'
