#!/bin/bash
# image-test.sh IMAGE_TAR SHELF_BENCH: the image as people run it, with Debian's podman: loaded from
# the OCI archive, started with the music read-only and the data in a volume, the first admin from
# SHELF_ADMIN_USER and a secret file; it answers ping, imports and streams, keeps its data over a
# restart, stops cleanly on `podman stop`, runs as a user that is not root, and without the
# admin variables starts anyway and says how to make one. Prints one line per check, the image's
# size and its start time; exits 1 if a check failed.
#
# On some machines podman needs the runc runtime and no default ulimits: this script gives both
# to podman through a containers.conf of its own.
set -uo pipefail

tar=${1:?usage: image-test.sh IMAGE_TAR SHELF_BENCH}
bench=${2:?usage: image-test.sh IMAGE_TAR SHELF_BENCH}
work=$(mktemp -d)
name="shelf-image-test-$$"
failures=0
printf '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\n' >"$work/containers.conf"
export CONTAINERS_CONF="$work/containers.conf"

cleanup() {
    podman rm -f "$name" "$name-bare" >/dev/null 2>&1
    podman volume rm -f "$name-data" "$name-bare" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

image=$(podman load --quiet -i "$tar" | sed -n 's/^Loaded image[s]*: *//p' | head -1)
[ -n "$image" ] && ok "the image loads ($image)" || { fail "the image loads"; exit 1; }

"$bench" sample-files --tracks 6 --dir "$work/music" --seconds 1 >/dev/null
chmod -R a+rX "$work"
printf 'admin secret\n' >"$work/admin-password"
chmod 0644 "$work/admin-password"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
auth="u=admin&p=admin%20secret&v=1.16.1&c=image-test&f=json"

# Waits (bounded against a hang) until the server answers ping; prints the seconds it took.
wait_for_ping() {
    local start=$SECONDS
    for _ in $(seq 1 600); do
        if curl -fsS "$base/rest/ping?$auth" 2>/dev/null | grep -q '"status":"ok"'; then
            echo $((SECONDS - start))
            return 0
        fi
        sleep 0.2 # polling a server that is still starting; the loop ends when it answers
    done
    return 1
}

started=$(date +%s.%N)
podman run -d --name "$name" -p "127.0.0.1:$port:4040" -v "$work/music:/music:ro" -v "$name-data:/data" \
    -v "$work/admin-password:/run/secrets/shelf-admin:ro" -e SHELF_ADMIN_USER=admin -e SHELF_ADMIN_PASSWORD_FILE=/run/secrets/shelf-admin \
    "$image" >/dev/null
if wait_for_ping >/dev/null; then
    ready=$(date +%s.%N)
    ok "it starts and answers ping ($(python3 -c "print(f'{$ready - $started:.2f}')") s from podman run)"
else
    fail "it starts and answers ping"
    podman logs "$name" | tail -20
    exit 1
fi
podman logs "$name" 2>&1 | grep -q "made the first user, admin" && ok "the first admin from SHELF_ADMIN_USER and its secret" || fail "the first admin"
uid=$(podman exec "$name" id -u)
[ "$uid" != 0 ] && ok "it runs as a user that is not root (uid $uid)" || fail "it runs as root"

curl -fsS "$base/rest/startScan?$auth" >/dev/null
count=0
for _ in $(seq 1 600); do
    status=$(curl -fsS "$base/rest/getScanStatus?$auth")
    if echo "$status" | grep -q '"scanning":false'; then
        count=$(echo "$status" | python3 -c 'import json, sys; print(json.load(sys.stdin)["subsonic-response"]["scanStatus"].get("count", 0))')
        [ "$count" -ge 6 ] && break
    fi
    sleep 0.2 # polling the scan's status until it reports the import done
done
[ "$count" -ge 6 ] && ok "a scan imports the read-only /music ($count tracks)" || fail "a scan imports /music (count $count)"

song=$(curl -fsS "$base/rest/search3?$auth&query=&songCount=1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["subsonic-response"]["searchResult3"]["song"][0]["id"])')
bytes=$(curl -fsS "$base/rest/stream?$auth&id=$song" | wc -c)
[ "$bytes" -gt 1000 ] && ok "a song streams ($bytes bytes)" || fail "a song streams ($bytes bytes)"
transcoded=$(curl -fsS "$base/rest/stream?$auth&id=$song&format=mp3&maxBitRate=96" | wc -c)
[ "$transcoded" -gt 1000 ] && ok "a transcode through the image's ffmpeg ($transcoded bytes)" || fail "a transcode ($transcoded bytes)"

podman restart "$name" >/dev/null
if wait_for_ping >/dev/null; then
    after=$(curl -fsS "$base/rest/search3?$auth&query=&songCount=500" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["subsonic-response"]["searchResult3"].get("song", [])))')
    [ "$after" = "$count" ] && ok "a restart keeps the library and the admin ($after songs)" || fail "a restart keeps the library ($after of $count)"
else
    fail "it answers after a restart"
fi

podman stop "$name" >/dev/null
code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] && ok "podman stop shuts it down cleanly (exit 0)" || fail "podman stop: exit $code"

podman run -d --name "$name-bare" -v "$name-bare:/data" "$image" >/dev/null
said=no
for _ in $(seq 1 300); do
    if podman logs "$name-bare" 2>&1 | grep -q "podman exec -it CONTAINER shelf user add NAME --admin"; then said=yes; break; fi
    sleep 0.2 # waiting for the line a server without users logs as it starts
done
[ "$said" = yes ] && ok "without the admin variables it starts and says how to make one" || fail "without the admin variables"
podman exec "$name-bare" sh -c 'printf "second\n" | shelf user add second --admin --password-stdin' >/dev/null &&
    ok "podman exec … shelf user add makes the first user" || fail "podman exec … shelf user add"

echo "image: $(du -h "$tar" | cut -f1) archive, $(podman image inspect --format '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1 / 1e6}') unpacked"
[ "$failures" = 0 ] && echo "all passed" || echo "FAILED: $failures"
exit $((failures > 0))
