#!/usr/bin/env bash
# The README's Portal walk-through as one script, in two steps around a browser:
#
#   setup  a Teamspace "Grading" with one member (and a second member left out of it),
#          and a private Portal "grading" in it with an access code, terms of service and
#          a form whose answers arrive as metadata.json and metadata.csv; prints the page's
#          address. Open it, and send a folder.
#   check  what arrived: the Package in the Teamspace with the form's files, seen by the
#          Teamspace's member and not by the member outside it.
#
#   FERRY=http://127.0.0.1:7400 EMAIL=admin@ferry.local PASSWORD=... DATA_DIR=~/.local/share/ferry/hosted \
#     docs/portal-walkthrough.sh setup|check
# DATA_DIR is the service's data dir: `ferry admin` adds the two members there (the API
# has no invitation route). The test suite runs both steps around a real browser.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
FERRY=${FERRY:-http://127.0.0.1:7400}
EMAIL=${EMAIL:?set EMAIL and PASSWORD of a Team owner or admin}
PASSWORD=${PASSWORD:?set EMAIL and PASSWORD of a Team owner or admin}
DATA_DIR=${DATA_DIR:?set DATA_DIR to the data dir of the service}
MEMBER_PASSWORD=${MEMBER_PASSWORD:-grading-walkthrough}

ferry() { node "$HERE/../bin/ferry.cjs" "$@"; }
json() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(String(eval('JSON.parse(s)'+process.argv[1]))))" "$1"; }
post() { curl -sSf -X POST -H 'content-type: application/json' "$@"; }
signin() { post "$FERRY/v1/auth" -d "{\"email\":\"$1\",\"password\":\"$2\"}" | json .token; }

TOKEN=$(signin "$EMAIL" "$PASSWORD")
AUTH="X-User-Token: $TOKEN"
TEAM=$(curl -sSf -H "$AUTH" "$FERRY/v1/teams" | json '[0].id')

setup() {
  # 1. Two members: the colourist will be in the Teamspace, the editor not.
  for who in colorist editor; do
    FERRY_ADMIN_PASSWORD=$MEMBER_PASSWORD ferry admin add-user --data-dir "$DATA_DIR" --team "$TEAM" \
      --email "$who@example.com" --role member > /dev/null
  done
  MEMBERSHIP=$(curl -sSf -H "$AUTH" "$FERRY/v1/teams/$TEAM/members" | json '.find(m=>m.email==="colorist@example.com").id')

  # 2. The Teamspace, with the colourist in it.
  SPACE=$(post "$FERRY/v1/teams/$TEAM/spaces" -H "$AUTH" -d "{\"name\":\"Grading\",\"member_ids\":[\"$MEMBERSHIP\"]}" | json .id)

  # 3. A private Portal in it: an access code, terms to accept, and a form.
  PORTAL=$(post "$FERRY/v1/teams/$TEAM/portals" -H "$AUTH" -d "{\"name\":\"Grading deliveries\",\"subdomain\":\"grading\",
    \"active\":true,\"access_code\":\"reel-2026\",\"access_level\":\"private\",\"teamspace_id\":\"$SPACE\",
    \"message\":\"Send the graded reels and their notes.\",\"terms_of_service_enabled\":true,
    \"terms_of_service\":{\"title\":\"Delivery terms\",\"text\":\"Files are kept for 30 days, then deleted.\"}}" | json .id)
  post "$FERRY/v1/portals/$PORTAL/form" -H "$AUTH" -d '{"name":"Grading sheet","delivery_formats":["json","csv"],"fields":[
    {"name":"reel","label":"Reel title","type":"package_name","visibility":"required","position":1},
    {"name":"camera","label":"Camera","type":"dropdown","visibility":"required","options":["Alexa","Venice"],"position":2},
    {"name":"notes","label":"Notes for the editor","type":"long_text","visibility":"optional","position":3}]}' > /dev/null
  echo "Teamspace: $SPACE"
  echo "Portal page: $FERRY/p/grading (access code reel-2026)"
}

check() {
  SPACE=$(curl -sSf -H "$AUTH" "$FERRY/v1.1/teams/$TEAM/spaces" | json '.records.find(s=>s.name==="Grading").id')
  PKG=$(curl -sSf -H "$AUTH" "$FERRY/v1.1/spaces/$SPACE/packages" | json '[0].id')
  echo "Package: $PKG \"$(curl -sSf -H "$AUTH" "$FERRY/v1/packages/$PKG" | json .name)\" in $(curl -sSf -H "$AUTH" "$FERRY/v1/packages/$PKG" | json .teamspace.name)"
  echo "Files: $(curl -sSf -H "$AUTH" "$FERRY/v1/packages/$PKG/files" | json '.filter(f=>f.kind==="file"&&f.path==="").map(f=>f.name).sort().join(", ")')"
  echo "Form answers: $(curl -sSf -H "$AUTH" "$FERRY/v1/packages/$PKG/metadata" | json '.data.camera.value')"
  # What each member's own list shows: the Teamspace's member sees it, the other does not.
  for who in colorist editor; do
    MT=$(signin "$who@example.com" "$MEMBER_PASSWORD")
    SEES=$(curl -sSf -H "X-User-Token: $MT" "$FERRY/v1.1/teams/$TEAM/packages" | json ".records.some(p=>p.id===\"$PKG\")")
    echo "$who sees it: $SEES"
  done
}

case "${1:-}" in
  setup) setup ;;
  check) check ;;
  *) echo "usage: $0 setup|check" >&2; exit 2 ;;
esac
