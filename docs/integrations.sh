#!/usr/bin/env bash
# The README's integrations walk-through as one script: a Portal whose arrivals
# land in a folder on this computer (the agent's Portal download automation) and
# in an S3 bucket (a cloud connection), while a webhook receiver logs each
# Package's package.created and package.finalized. The bucket is a second Ferry
# store with keys of its own, standing in for yours. The test suite runs it.
#
# Needs the service and a signed-in agent running (`npm start` runs both):
#   FERRY=http://127.0.0.1:7400 EMAIL=admin@ferry.local PASSWORD=... docs/integrations.sh
# The bucket and the receiver are on 127.0.0.1: `npm start` allows that; a `ferry serve`
# needs --allow-private-targets 127.0.0.1/32 (it refuses private addresses by default).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
FERRY=${FERRY:-http://127.0.0.1:7400}
EMAIL=${EMAIL:?set EMAIL and PASSWORD of a Team owner or admin}
PASSWORD=${PASSWORD:?set EMAIL and PASSWORD of a Team owner or admin}
export FERRY_AGENT_URL=${FERRY_AGENT_URL:-http://127.0.0.1:8080/api/v1}
BUCKET_LISTEN=${BUCKET_LISTEN:-127.0.0.1:7500}
HOOK_LISTEN=${HOOK_LISTEN:-127.0.0.1:7600}
SUBDOMAIN=${SUBDOMAIN:-inbox-$(date +%s)}
WAIT_S=${WAIT_S:-300}
WORK=${WORK:-$(mktemp -d)}
cd "$WORK"

ferry() { node "$HERE/../bin/ferry.cjs" "$@"; }
json() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(String(eval('JSON.parse(s)'+process.argv[1]))))" "$1"; }
post() { curl -sSf -X POST -H 'content-type: application/json' "$@"; }
# until_true WHAT CMD: runs CMD every second until it prints "true" (WAIT_S at most).
until_true() {
  for _ in $(seq 1 "$WAIT_S"); do [ "$(eval "$2" 2>/dev/null)" = true ] && return 0; sleep 1; done
  echo "gave up waiting for $1" >&2; exit 1
}
# s3 ARGS: curl signing for the bucket (curl's own AWS Signature V4).
s3() { curl -sSf --aws-sigv4 aws:amz:us-east-1:s3 -u walkthrough:walkthrough-secret-key -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"; }
# uri S [query]: S percent-encoded as AWS Signature V4 wants it, keeping "/" (but in a query value).
uri() { node -e "const [s,q]=process.argv.slice(1),e=x=>encodeURIComponent(x).replace(/[!'()*]/g,c=>'%'+c.charCodeAt(0).toString(16).toUpperCase());console.log(q?e(s):s.split('/').map(e).join('/'))" "$1" "${2:-}"; }
# sums DIR: one "sha256  path" line per file under DIR, sorted.
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
# same DIR: "identical" when DIR holds the folder footage as sent, else the differences (on stderr).
same() { if diff <(sums footage) <(sums "$1/footage") >&2; then echo identical; else echo DIFFERENT; fi; }

# 1. Your bucket ("deliveries") and a webhook receiver, both on this computer.
node "$HERE/../bin/ferry.cjs" objectstore --listen "$BUCKET_LISTEN" --data-dir bucket-data --bucket deliveries \
  --access-key walkthrough --secret-key walkthrough-secret-key --log-level warn &
BUCKET_PID=$!
node "$HERE/webhook-receiver.mjs" "$HOOK_LISTEN" events.log > receiver.out &
HOOK_PID=$!
trap 'kill $BUCKET_PID $HOOK_PID 2>/dev/null || true' EXIT
until_true "the bucket and the receiver" "s3 -o /dev/null 'http://$BUCKET_LISTEN/deliveries?list-type=2' && curl -sf -o /dev/null 'http://$HOOK_LISTEN/' && echo true"

# 2. Sign in and pick your Team.
TOKEN=$(post "$FERRY/v1/auth" -d "{\"email\":\"$EMAIL\",\"password\":\"$PASSWORD\"}" | json .token)
AUTH="X-User-Token: $TOKEN"
TEAM=$(curl -sSf -H "$AUTH" "$FERRY/v1/teams" | json '[0].id')

# 3. A webhook for both Package events, sent to the receiver.
HOOK=$(post "$FERRY/v1/teams/$TEAM/custom_webhooks" -H "$AUTH" -d "{\"name\":\"Log arrivals\",\"active\":true,
  \"events\":[\"package.created\",\"package.finalized\"],\"method\":\"POST\",\"url\":\"http://$HOOK_LISTEN/ferry\"}" | json .id)

# 4. A cloud connection to the bucket: Packages go under "from-ferry/".
CONN=$(post "$FERRY/v1/teams/$TEAM/cloud_connections" -H "$AUTH" -d "{\"name\":\"Deliveries bucket\",\"provider\":\"generic_s3\",
  \"authorization\":{\"endpoint\":\"http://$BUCKET_LISTEN\",\"region\":\"default\",\"destination\":\"deliveries\",
  \"client_id\":\"walkthrough\",\"client_secret\":\"walkthrough-secret-key\"},\"target_directory_id\":\"from-ferry\"}" | json .id)

# 5. The Portal, with the connection (each finalized Package is transferred) and the webhook.
post "$FERRY/v1/teams/$TEAM/portals" -H "$AUTH" -d "{\"name\":\"Inbox\",\"subdomain\":\"$SUBDOMAIN\",\"active\":true,
  \"configure_cloud_connections\":true,\"cloud_connections\":[{\"id\":\"$CONN\",\"target_action\":\"transfer\"}],
  \"custom_webhooks\":[{\"id\":\"$HOOK\"}]}" > /dev/null
echo "Portal: $SUBDOMAIN"

# 6. The agent fetches every Package that arrives through the Portal from now on into ./arrivals.
FERRY_PASSWORD=$PASSWORD ferry login --email "$EMAIL" > /dev/null
AUTO=$(ferry automations add portal_download --name Arrivals --portal-subdomain "$SUBDOMAIN" \
  --dst-folder "$WORK/arrivals" --json | json .automation_id)

# 7. Someone sends a folder to the Portal (no account needed).
mkdir -p footage/audio
head -c 5000000 /dev/urandom > footage/take1.mov
head -c 300000 /dev/urandom > footage/audio/boom.wav
echo "Day 1: two takes, one sound file" > footage/notes.txt
PKG=$(ferry portal-upload footage --subdomain "$SUBDOMAIN" --sender-email sender@example.com --json | json .package_id)
echo "Package: $PKG"

# 8. Wait for the three deliveries.
until_true "the download automation" "ferry automations packages $AUTO --json | json '.some(p=>p.package_id===\"$PKG\"&&p.state===\"complete\")'"
until_true "the bucket transfer" "curl -sSf -H '$AUTH' '$FERRY/v1/packages/$PKG/transfers' | json '.records.some(t=>t.state===\"complete\")'"
until_true "both webhook events" "grep -c '\"id\":\"$PKG\"' events.log | json '>=2'"

# 9. Same bytes in the folder and in the bucket? And what did the receiver log?
# A Package that is one folder of its name lands once: arrivals/footage holds the folder as sent.
FOLDER=$(ls arrivals)
echo "arrivals/$FOLDER: $(same arrivals)"
PREFIX=$(curl -sSf -H "$AUTH" "$FERRY/v1/packages/$PKG/transfers" | json '.records[0].destination.replace(/^deliveries\//,"")')
mkdir -p from-bucket
s3 "http://$BUCKET_LISTEN/deliveries?list-type=2&prefix=$(uri "$PREFIX" query)" | grep -o '<Key>[^<]*</Key>' | sed 's:</\?Key>::g' |
  while IFS= read -r KEY; do
    mkdir -p "from-bucket/$(dirname "${KEY#"$PREFIX"}")"
    s3 -o "from-bucket/${KEY#"$PREFIX"}" "http://$BUCKET_LISTEN/deliveries/$(uri "$KEY")"
  done
echo "bucket deliveries/$PREFIX: $(same from-bucket)"
echo "webhook events: $(node -e "const fs=require('fs');console.log(fs.readFileSync('events.log','utf8').trim().split('\n').map(JSON.parse).filter(e=>e.object.id===process.argv[1]).map(e=>e.event_type).join(', '))" "$PKG")"
