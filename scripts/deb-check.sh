#!/usr/bin/env bash
# scripts/deb-check.sh DEB: the package's installation test, on this machine. lintian must report no
# errors; then the package is installed with dpkg -i (twice, as an upgrade runs the maintainer
# scripts), shelf must run and import with the Swift toolchain out of reach, and dpkg -r must
# leave only the data README.Debian names, which dpkg -P removes too.
#
# It installs and purges a real package, so it runs as root only (exit 77, skipped, otherwise),
# and refuses to start where shelf is installed or its user or library exist: the purge would
# delete them. A failed check is reported and the rest still run; the package is purged on any
# exit, so the machine is left as it was found.
set -euo pipefail

skip() { echo "deb-check: skipped: $*"; exit 77; }
die() { echo "deb-check: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: scripts/deb-check.sh DEB"
deb=$1
[ "$(id -u)" = 0 ] || skip "needs root (it installs and purges the package)"
command -v dpkg >/dev/null || skip "no dpkg on this machine"
[ -f "$deb" ] || die "no such file: $deb"

package=$(dpkg-deb -f "$deb" Package)
version=$(dpkg-deb -f "$deb" Version)
[ "$package" = shelf ] || die "$deb is package '$package', not shelf"

status=$(dpkg-query -W -f='${db:Status-Abbrev}' shelf 2>/dev/null || true)
case $status in "" | "un "*) ;; *) die "shelf is installed here ($status): remove it first, the test ends with a purge" ;; esac
! getent passwd shelf >/dev/null || die "a 'shelf' user exists: the test's purge would delete it"
! getent group shelf >/dev/null || die "a 'shelf' group exists: the test's purge would delete it"
[ ! -e /var/lib/shelf ] || die "/var/lib/shelf exists: the test's purge would delete it"
[ ! -e /var/log/shelf ] || die "/var/log/shelf exists: the test's purge would delete it"

results=()
failed=0
# A check's line for the summary; the details, when there are any, are printed once, here.
ok() { results+=("ok    $1"); echo "deb-check: ok: $1"; }
fail() {
    results+=("FAIL  $1")
    failed=1
    echo "deb-check: FAIL: $1"
    if [ -n "${2:-}" ]; then printf '%s\n' "$2" | sed 's/^/    /'; fi
}
note() {
    results+=("note  $1")
    echo "deb-check: note: $1"
    if [ -n "${2:-}" ]; then printf '%s\n' "$2" | sed 's/^/    /'; fi
}

tmp=$(mktemp -d)
installed=0
cleanup() {
    if [ "$installed" = 1 ]; then
        echo "deb-check: purging shelf after an early exit"
        dpkg -P shelf >/dev/null || echo "deb-check: dpkg -P shelf failed: purge it by hand" >&2
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

summary() {
    echo
    echo "deb-check: $deb"
    printf '  %s\n' "${results[@]}"
}

# The toolchain's directory, where a dynamically linked Swift runtime would come from.
toolchain=""
if command -v swift >/dev/null; then
    toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
fi

# 1. lintian: errors fail, warnings and the rest are shown.
if command -v lintian >/dev/null; then
    echo "deb-check: lintian --fail-on error $deb"
    if lintian --fail-on error "$deb"; then
        ok "lintian: no errors"
    else
        fail "lintian reports errors (above)"
    fi
else
    fail "lintian is not installed (make deps installs it)"
fi

# 2. Install; then again over itself, as an upgrade would (prerm upgrade, postinst with a version).
installed=1
if ! dpkg -i "$deb"; then
    missing=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/([^)]*)//; s/|.*//; s/ //g' | while read -r dep; do
        if [ -n "$dep" ] && ! dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q 'ok installed'; then printf ' %s' "$dep"; fi
    done)
    if [ -n "$missing" ]; then
        echo "deb-check: the package's dependencies are missing; install them first: apt-get install$missing" >&2
    fi
    summary
    die "dpkg -i $deb failed"
fi
dpkg -i "$deb" >/dev/null || fail "dpkg -i over the installed package (an upgrade) failed"
ok "dpkg -i (install, and again as an upgrade)"

# 3. The binary, with the toolchain out of every search path.
bare=(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH=)
if out=$("${bare[@]}" /usr/bin/shelf --version 2>&1) && [[ $out == "shelf $version"* ]]; then
    ok "/usr/bin/shelf --version in a bare environment: $out"
else
    fail "/usr/bin/shelf --version in a bare environment: $out"
fi
ldd_out=$(ldd /usr/bin/shelf 2>&1 || true)
bad_libs=$(
    grep -Ei 'swift|not found' <<<"$ldd_out" || true
    if [ -n "$toolchain" ] && [ "$toolchain" != / ]; then grep -F "$toolchain/" <<<"$ldd_out" || true; fi
)
if [ -z "$bad_libs" ]; then
    ok "ldd /usr/bin/shelf: nothing from the toolchain${toolchain:+ ($toolchain)}"
else
    fail "ldd /usr/bin/shelf: $(sort -u <<<"$bad_libs" | wc -l) libraries from the toolchain or not found" "$(sort -u <<<"$bad_libs")"
fi

# 4. The user, the library directory and the files.
if id shelf >/dev/null 2>&1 && [ "$(getent passwd shelf | cut -d: -f6,7)" = /var/lib/shelf:/usr/sbin/nologin ]; then
    ok "user shelf: $(id shelf)"
else
    fail "user shelf missing or not home /var/lib/shelf with /usr/sbin/nologin: $(getent passwd shelf || echo none)"
fi
lib_stat=$(stat -c '%U:%G %a' /var/lib/shelf 2>/dev/null || echo missing)
if [ "$lib_stat" = "shelf:shelf 750" ]; then
    ok "/var/lib/shelf: $lib_stat"
else
    fail "/var/lib/shelf is '$lib_stat', not 'shelf:shelf 750'"
fi
for file in /usr/share/man/man1/shelf.1.gz /usr/share/bash-completion/completions/shelf \
    /usr/share/zsh/vendor-completions/_shelf /usr/share/fish/vendor_completions.d/shelf.fish \
    /lib/systemd/system/shelf.service /usr/share/doc/shelf/copyright /usr/share/doc/shelf/examples/config.toml; do
    [ -s "$file" ] || fail "$file is missing or empty"
done
if command -v man >/dev/null && man -l /usr/share/man/man1/shelf.1.gz 2>/dev/null | grep -q .; then
    ok "man page renders"
fi

# 5. A small import into the service's library, as the service's user, in a bare environment.
music=$tmp/music
mkdir -p "$music"
chmod 0755 "$tmp"
if command -v ffmpeg >/dev/null; then
    for n in 1 2; do
        ffmpeg -loglevel error -f lavfi -i "sine=frequency=$((330 * n)):duration=1" \
            -metadata title="deb-check $n" -metadata artist="deb-check" "$music/$n.flac"
    done
elif command -v python3 >/dev/null; then
    python3 - "$music" <<'EOF'
import math, struct, sys, wave
for n in (1, 2):
    with wave.open(f"{sys.argv[1]}/deb-check {n}.wav", "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(44100)
        w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 330 * n * i / 44100))) for i in range(44100)))
EOF
else
    fail "neither ffmpeg nor python3 to make audio files with"
fi
chmod -R a+rX "$music"
as_shelf=(runuser -u shelf -- "${bare[@]}" /usr/bin/shelf --library /var/lib/shelf)
if import_out=$("${as_shelf[@]}" import "$music" --json 2>&1) \
    && tracks_out=$("${as_shelf[@]}" tracks --json 2>&1) \
    && grep -q 'deb-check 1' <<<"$tracks_out" && grep -q 'deb-check 2' <<<"$tracks_out"; then
    ok "import of 2 files as user shelf into /var/lib/shelf; tracks lists both"
else
    fail "import as user shelf" "${import_out:-}
${tracks_out:-}"
fi

# 6. The unit, as systemd reads it; only an error where systemd runs counts.
unit=/lib/systemd/system/shelf.service
if command -v systemd-analyze >/dev/null; then
    if verify_out=$(systemd-analyze verify "$unit" 2>&1); then
        ok "systemd-analyze verify $unit${verify_out:+: $verify_out}"
    elif [ -d /run/systemd/system ]; then
        fail "systemd-analyze verify $unit" "$verify_out"
    else
        note "systemd-analyze verify $unit failed; systemd does not run here, so it does not count" "$verify_out"
    fi
else
    note "no systemd-analyze: the unit is not verified"
fi

# 7. Remove: every file the package listed goes; directories may stay only while another package
#    owns them or they hold something; the library and the user stay, as README.Debian says.
listed=$(dpkg -L shelf)
if dpkg -r shelf; then
    leftovers=()
    while IFS= read -r path; do
        case $path in "" | /.) continue ;; esac
        # Followed through symlinks: on a merged-/usr system /lib is one, and not ours.
        if [ -d "$path" ]; then
            if [ -z "$(ls -A "$path")" ] && ! dpkg-query -S "$path" >/dev/null 2>&1; then
                leftovers+=("$path/ (empty, no package owns it)")
            fi
        elif [ -e "$path" ] || [ -L "$path" ]; then
            leftovers+=("$path")
        fi
    done <<<"$listed"
    if [ ${#leftovers[@]} -eq 0 ]; then
        ok "dpkg -r: none of the $(wc -l <<<"$listed") listed paths is left"
    else
        fail "dpkg -r left: ${leftovers[*]}"
    fi
    if [ -f /var/lib/shelf/library.sqlite ] && id shelf >/dev/null 2>&1; then
        ok "dpkg -r kept the library (/var/lib/shelf) and the user"
    else
        fail "dpkg -r did not keep /var/lib/shelf/library.sqlite and the user shelf"
    fi
else
    fail "dpkg -r shelf failed"
fi

# 8. Purge: the library, the log directory, the user, the group and the unit's enablement go too.
if dpkg -P shelf; then
    installed=0
    gone=()
    [ ! -e /var/lib/shelf ] || gone+=(/var/lib/shelf)
    [ ! -e /var/log/shelf ] || gone+=(/var/log/shelf)
    ! getent passwd shelf >/dev/null || gone+=("user shelf")
    ! getent group shelf >/dev/null || gone+=("group shelf")
    while IFS= read -r path; do gone+=("$path"); done < <(find /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled \
        -name 'shelf.service*' 2>/dev/null)
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' shelf 2>/dev/null || true)
    case $status in "" | "un "*) ;; *) gone+=("dpkg status '$status'") ;; esac
    if [ ${#gone[@]} -eq 0 ]; then
        ok "dpkg -P: library, user, group and dpkg's record gone"
    else
        fail "dpkg -P left: ${gone[*]}"
    fi
else
    fail "dpkg -P shelf failed"
fi

summary
[ "$failed" = 0 ] || die "some checks failed (above)"
echo "deb-check: all checks passed"
