#!/bin/sh
# `make demo`'s server step: starts `shelf serve` on the demo library on a free loopback port,
# fetches the web page, a page of tracks, a picture and a stream range with curl, then stops it
# with SIGTERM and prints how to open the demo library in a browser.
set -eu
shelf="$1"
library="$2"
out="$3"
log="$out/serve.log"
mkdir -p "$out"
if ! "$shelf" --library "$library" user list --json | grep -q '"name":"demo"'; then
  printf 'demo-password\n' | "$shelf" --library "$library" user add demo --admin --password-stdin
fi
"$shelf" --library "$library" serve --listen 127.0.0.1:0 2> "$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
# Wait for the line that names the address (the server has bound its port by then).
tries=0
until grep -q ' on http://' "$log"; do
  tries=$((tries + 1))
  if [ "$tries" -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then cat "$log"; exit 1; fi
  sleep 0.1
done
base=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -n 1)
echo "shelf serve is up at $base"
jar="$out/cookies"
curl -sS -c "$jar" -H 'Content-Type: application/json' -d '{"name":"demo","password":"demo-password"}' "$base/api/session"
echo
echo "--- GET /api/tracks?sort=artist&limit=3 (first 400 bytes)"
curl -sS -b "$jar" "$base/api/tracks?sort=artist&limit=3" | cut -c1-400
echo
echo "--- GET /api/sections?sort=artist"
curl -sS -b "$jar" "$base/api/sections?sort=artist" | cut -c1-300
echo
echo "--- GET /api/tracks/1/artwork?size=300 → $out/cover-300.jpg"
curl -sS -b "$jar" -o "$out/cover-300.jpg" -w '%{http_code} %{content_type} %{size_download} bytes\n' "$base/api/tracks/1/artwork?size=300"
echo "--- GET /api/stream/1 with Range: bytes=0-1023"
curl -sS -b "$jar" -o "$out/stream-head.bin" -H 'Range: bytes=0-1023' -D - "$base/api/stream/1" | grep -iE '^(HTTP|content-range|content-type|accept-ranges)'
echo "--- GET / (the web page)"
curl -sS -o /dev/null -D - "$base/" | grep -iE '^(HTTP|content-type|etag|content-security-policy)'
kill -TERM "$pid"
wait "$pid"
trap - EXIT
echo "--- the server's log"
cat "$log"
echo
echo "Open the demo library in a browser:"
echo "  $shelf --library $library serve"
echo "  then open http://127.0.0.1:4040/ and sign in as demo with the password demo-password"
