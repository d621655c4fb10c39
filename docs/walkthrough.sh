#!/usr/bin/env bash
# The README's curl walk-through as one script: upload a file through blueprints
# in chunks, then download it through a password-protected Link and compare.
# The test suite runs it (small file) so the README stays true.
#
#   FERRY=http://127.0.0.1:7400 EMAIL=you@example.com PASSWORD=... SIZE_MB=1024 CHUNK_MB=100 docs/walkthrough.sh
set -euo pipefail
FERRY=${FERRY:-http://127.0.0.1:7400}
EMAIL=${EMAIL:?set EMAIL and PASSWORD of a Team member}
PASSWORD=${PASSWORD:?set EMAIL and PASSWORD of a Team member}
SIZE_MB=${SIZE_MB:-1024}
CHUNK_MB=${CHUNK_MB:-100}
WORK=${WORK:-$(mktemp -d)}
cd "$WORK"

# json EXPR: prints a field of the JSON on stdin (Node is already installed for Ferry).
json() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(String(eval('JSON.parse(s)'+process.argv[1]))))" "$1"; }
post() { curl -sSf -X POST -H 'content-type: application/json' "$@"; }

# 1. Sign in and pick your Team.
TOKEN=$(post "$FERRY/v1/auth" -d "{\"email\":\"$EMAIL\",\"password\":\"$PASSWORD\"}" | json .token)
TEAM=$(curl -sSf -H "X-User-Token: $TOKEN" "$FERRY/v1/teams" | json '[0].id')

# 2. Create a Package; its access_token lets you add files.
PKG=$(post "$FERRY/v1/teams/$TEAM/packages" -H "X-User-Token: $TOKEN" \
  -d '{"name":"Walk-through","description":"one big file","recipients":[]}')
PKG_ID=$(echo "$PKG" | json .id)
PKG_TOKEN=$(echo "$PKG" | json .access_token)

# 3. Make a file and register it.
head -c $((SIZE_MB * 1024 * 1024)) /dev/urandom > big.bin
SIZE=$(wc -c < big.bin)
CHUNK=$((CHUNK_MB * 1024 * 1024))
FILE=$(post "$FERRY/v1/packages/$PKG_ID/files" -H "X-Package-Token: $PKG_TOKEN" \
  -d "{\"kind\":\"file\",\"name\":\"big.bin\",\"path\":\"\",\"last_modified\":\"2026-01-01T00:00:00Z\",\"size\":$SIZE,\"chunk_size\":$CHUNK}")
FILE_ID=$(echo "$FILE" | json .file.id)

# 4. Run the create blueprint exactly as given: it starts a multipart upload.
CREATE_URL=$(echo "$FILE" | json .create_blueprint.url)
UPLOAD_ID=$(curl -sSf -X POST "$CREATE_URL" | sed -n 's:.*<UploadId>\(.*\)</UploadId>.*:\1:p')

# 5. Ask for one blueprint per chunk, PUT each chunk, keep the ETags.
split -b "$CHUNK" -d -a 5 big.bin part.
COUNT=$(ls part.* | wc -l)
post "$FERRY/v1/packages/$PKG_ID/files/$FILE_ID?start=0&count=$COUNT" -H "X-Package-Token: $PKG_TOKEN" \
  -d "{\"upload_id\":\"$UPLOAD_ID\"}" > blueprints.json
EXTRAS=""
for i in $(seq 0 $((COUNT - 1))); do
  URL=$(json "[$i].url" < blueprints.json)
  PART=$(printf 'part.%05d' "$i")
  ETAG=$(curl -sSf -T "$PART" "$URL" -D - -o /dev/null | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: *//p')
  EXTRAS="$EXTRAS{\"part_number\":\"$((i + 1))\",\"etag\":$ETAG},"
done

# 6. Finalize the file (the service checks the size), then the Package.
post "$FERRY/v1/packages/$PKG_ID/files/$FILE_ID/finalize" -H "X-Package-Token: $PKG_TOKEN" \
  -d "{\"chunk_extras\":[${EXTRAS%,}],\"file_extras\":{\"upload_id\":\"$UPLOAD_ID\"},\"size\":$SIZE,\"chunk_size\":$CHUNK}"
post "$FERRY/v1/packages/$PKG_ID/finalize" -H "X-Package-Token: $PKG_TOKEN"

# 7. Make a download Link with a password.
LINK=$(post "$FERRY/v1/packages/$PKG_ID/links" -H "X-Package-Token: $PKG_TOKEN" -d '{"password":"open sesame"}')
echo "Link: $(echo "$LINK" | json .url)"
LINK_ID=$(echo "$LINK" | json .id)
SECRET=$(echo "$LINK" | json .secret)

# 8. As the recipient: resolve the Link, list the files, fetch the file's URL, download.
READ_TOKEN=$(curl -sSf -H 'X-Link-Password: open sesame' "$FERRY/v1/links/$LINK_ID?secret=$SECRET" | json .package_token)
DL_ID=$(curl -sSf -H "X-Package-Token: $READ_TOKEN" "$FERRY/v1/packages/$PKG_ID/files" | json '.find(f=>f.kind==="file").id')
DL_URL=$(curl -sSf -H "X-Package-Token: $READ_TOKEN" "$FERRY/v1/packages/$PKG_ID/files/$DL_ID/download" | json .url)
curl -sSf -o downloaded.bin "$DL_URL"

# 9. Same bytes?
sha256sum big.bin downloaded.bin
[ "$(sha256sum < big.bin)" = "$(sha256sum < downloaded.bin)" ] && echo "identical"
