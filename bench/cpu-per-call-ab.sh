#!/usr/bin/env bash
# CPU per call of two builds of the service, side by side, in alternating rounds: the before and
# after of a change to the call path. Each build runs at WORKERS=1 with its own Redis; h2load (a
# lean C client) sends N calls per load and the service's whole process group's CPU time (user +
# system, from /proc) is divided by N. Loads, one per way into a call:
#   grpc      IntrospectToken, gRPC over h2c, 4 connections x 8 streams (the raw-stream path)
#   grpc-web  IntrospectToken, gRPC-Web over h2c (node's compatibility objects)
#   connect   IntrospectToken, Connect unary application/proto over h2c
#   rest      GET /user/tokens with a bearer token over h2c (the REST gateway)
#   auth      GET /auth over 32 HTTP/1.1 keep-alive connections (forward-auth)
# Run it from the project's root on a quiet machine (`uptime` load below 0.5, nothing else running).
# usage: bench/cpu-per-call-ab.sh DIR_A DIR_B      (each a built checkout: npm ci && npm run build)
# env: ROUNDS (5), N (calls per load and round, 20000), LOADS (the loads to run, default all: "grpc grpc-web connect rest auth")
set -u
[ $# -eq 2 ] || { echo "usage: $0 DIR_A DIR_B" >&2; exit 2; }
dirs=("$(cd "$1" && pwd)" "$(cd "$2" && pwd)")
ROUNDS=${ROUNDS:-5}; N=${N:-20000}
command -v h2load >/dev/null || apt-get install -y -qq nghttp2-client >/dev/null
w=$(mktemp -d); pids=(); redis=()
cleanup() { for p in "${pids[@]}"; do kill -TERM -- -"$p" 2>/dev/null; done; sleep 1
  for p in "${pids[@]}"; do kill -KILL -- -"$p" 2>/dev/null; done
  for r in "${redis[@]}"; do redis-cli -p "$r" shutdown nosave >/dev/null 2>&1; done; rm -rf "$w"; }
trap cleanup EXIT
ports() { node -e 'const n=require("net");Promise.all(Array.from({length:3},()=>new Promise(r=>{const s=n.createServer().listen(0,"127.0.0.1",()=>r(s))}))).then(ss=>{console.log(ss.map(s=>s.address().port).join(" "));ss.forEach(s=>s.close())})'; }
declare -a pub int sid tok
for i in 0 1; do
  read -r rp sp si < <(ports); redis+=("$rp"); pub[$i]=$sp; int[$i]=$si
  mkdir -p "$w/r$i"; redis-server --port "$rp" --bind 127.0.0.1 --dir "$w/r$i" --save '' --appendonly no --daemonize yes >/dev/null
  secret=$(node -e 'console.log(require("crypto").randomBytes(24).toString("base64url"))')
  printf 'ab sha256:%s\n' "$(printf '%s' "$secret" | sha256sum | cut -c1-64)" >"$w/operators$i"
  (cd "${dirs[$i]}" && exec setsid env HOST=127.0.0.1 PUBLIC_PORT="$sp" INTERNAL_PORT="$si" REDIS_URL="redis://127.0.0.1:$rp" \
    ADMIN_CREDENTIALS_FILE="$w/operators$i" WORKERS=1 TOKEN_RATE_LIMIT_PER_MINUTE=1000000 TOKEN_LIST_RATE_LIMIT_PER_MINUTE=1000000 \
    node dist/main.js >"$w/svc$i.log" 2>&1) & pids+=($!); sid[$i]=$!
  for _ in $(seq 1 600); do curl -fs "http://127.0.0.1:$si/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fs "http://127.0.0.1:$si/readyz" >/dev/null || { echo "${dirs[$i]} did not start:"; tail -20 "$w/svc$i.log"; exit 1; }
  tok[$i]=$(SP=$sp SI=$si SECRET=$secret node --input-type=module -e '
import { connect } from "node:http2"; import crypto from "node:crypto";
const str = (f, s) => { const b = Buffer.from(s); return Buffer.concat([Buffer.of((f << 3) | 2, b.length), b]); };
const grpc = (port, path, msg, auth) => new Promise((ok, no) => { const c = connect(`http://127.0.0.1:${port}`);
  const s = c.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", authorization: `Bearer ${auth}` });
  const f = Buffer.alloc(5); f.writeUInt32BE(msg.length, 1); s.end(Buffer.concat([f, msg]));
  s.on("trailers", (t) => { c.close(); t["grpc-status"] === "0" ? ok() : no(new Error(`${path}: ${t["grpc-status"]} ${t["grpc-message"]}`)); });
  s.resume(); s.on("error", no); });
const userId = crypto.randomUUID(); const k = crypto.generateKeyPairSync("ed25519");
const pub = k.publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("hex");
await grpc(process.env.SI, "/perps.token.v1.UserKeyService/PutUserKey", Buffer.concat([str(1, userId), str(2, pub)]), process.env.SECRET);
const timestamp = Date.now(), expiresIn = 86400, name = "cpu-ab";
const signature = crypto.sign(null, Buffer.from(`createToken:${timestamp}:${expiresIn}:${name}:${userId}`), k.privateKey).toString("hex");
const r = await fetch(`http://127.0.0.1:${process.env.SP}/user/tokens`, { method: "POST", headers: { "content-type": "application/json" },
  body: JSON.stringify({ signature, timestamp, userId, expiresIn, name }) });
if (r.status !== 201) throw new Error(`create: ${r.status} ${await r.text()}`);
console.log((await r.json()).token);') || { echo "could not make a token on ${dirs[$i]}"; exit 1; }
  printf '%s' "${tok[$i]}" | node -e 'const t=require("fs").readFileSync(0);const m=Buffer.concat([Buffer.of(10,t.length),t]);const f=Buffer.alloc(5);f.writeUInt32BE(m.length,1);require("fs").writeFileSync(process.argv[1],Buffer.concat([f,m]));require("fs").writeFileSync(process.argv[2],m)' "$w/env$i.bin" "$w/msg$i.bin"
done
# The CPU clock ticks (user + system) of every process of a service's session.
ticks() { local t=0 p; for p in $(ps -s "$1" -o pid=); do
  t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
hz=$(getconf CLK_TCK)
intro() { h2load -n "$N" -c 4 -m 8 -t 1 -d "$2" -H "content-type: $3" -H 'te: trailers' "http://127.0.0.1:${int[$1]}/perps.token.v1.TokenIntrospectionService/IntrospectToken"; }
load() { case $2 in
  grpc) intro "$1" "$w/env$1.bin" application/grpc ;;
  grpc-web) intro "$1" "$w/env$1.bin" application/grpc-web+proto ;;
  connect) intro "$1" "$w/msg$1.bin" application/proto ;;
  rest) h2load -n "$N" -c 4 -m 8 -t 1 -H "authorization: Bearer ${tok[$1]}" "http://127.0.0.1:${pub[$1]}/user/tokens" ;;
  auth) h2load --h1 -n "$N" -c 32 -m 1 -t 1 -H "authorization: Bearer ${tok[$1]}" "http://127.0.0.1:${int[$1]}/auth" ;;
  esac; }
# One measured load: µs of CPU per call, or 0 when any call failed.
measure() { local before after out ok
  before=$(ticks "${sid[$1]}"); out=$(load "$1" "$2" 2>&1); after=$(ticks "${sid[$1]}")
  ok=$(awk '/status codes:/{print $3}' <<<"$out"); ok=${ok:-0}
  if [ "$ok" -ne "$N" ] || grep -q 'errored' <<<"$(grep '^requests:' <<<"$out" | grep -v ' 0 errored')"; then echo 0; return; fi
  awk -v d=$((after - before)) -v hz="$hz" -v n="$N" 'BEGIN{printf "%.1f", d / hz * 1e6 / n}'; }
read -r -a loads <<<"${LOADS:-grpc grpc-web connect rest auth}"
for l in "${loads[@]}"; do N=2000 measure 0 "$l" >/dev/null; N=2000 measure 1 "$l" >/dev/null; done
echo "$(node --version), WORKERS=1, N=$N, $ROUNDS rounds; CPU µs per call, A | B"
echo "A: ${dirs[0]} ($(git -C "${dirs[0]}" rev-parse --short HEAD 2>/dev/null))"
echo "B: ${dirs[1]} ($(git -C "${dirs[1]}" rev-parse --short HEAD 2>/dev/null)$( [ -n "$(git -C "${dirs[1]}" status --porcelain -- src 2>/dev/null)" ] && echo ' + uncommitted'))"
declare -A res
for r in $(seq 1 "$ROUNDS"); do
  for l in "${loads[@]}"; do
    if [ $((r % 2)) -eq 1 ]; then a=$(measure 0 "$l"); b=$(measure 1 "$l"); else b=$(measure 1 "$l"); a=$(measure 0 "$l"); fi
    res[$l]+="$a $b;"; echo "round $r $l: $a | $b"
  done
done
for l in "${loads[@]}"; do
  echo "${res[$l]}" | awk -v name="$l" 'function med(x,n){asort(x); return (n%2)?x[(n+1)/2]:(x[n/2]+x[n/2+1])/2}
    {n=split($0,rows,";"); k=0; for(i=1;i<=n;i++){ if(rows[i]=="") continue; split(rows[i],v," "); k++; a[k]=v[1]; b[k]=v[2]; q[k]=(v[1]>0)?v[2]/v[1]:0 }
     printf "%-9s A %6.1f µs  B %6.1f µs  | B/A %.3f (median of per-round ratios; range %.3f–%.3f)\n", name, med(a,k), med(b,k), med(q,k), (asort(q)>0)?q[1]:0, q[k]}'
done
