#!/usr/bin/env bash
# scripts/make-deb.sh BIN OUTDIR: packages a built `shelf` as OUTDIR/shelf_VERSION_ARCH.deb with
# dpkg-deb alone (no debian/ source package, no debhelper), and prints the package's path.
#
# The binary is taken as it is (`make deb` builds it with the Swift runtime linked statically);
# one that needs a library from outside the system's library directories (the toolchain's
# libswiftCore.so) is refused, since the package could not run without the toolchain.
# SHELF_DEB_ALLOW_FOREIGN_LIBS=1 packages it anyway, to try the packaging on a dynamic build.
#
# The version is the one the binary reports; the man page and completions are written by the
# binary, as `make install` does; Depends comes from dpkg-shlibdeps; the maintainer scripts,
# copyright and README.Debian are the files in contrib/debian. SHELF_DEB_MAINTAINER overrides
# the Maintainer (default: the author of the commit the binary was built from), and
# SOURCE_DATE_EPOCH the date of the changelog and files (default: that commit's date).
set -euo pipefail

die() { echo "make-deb: $*" >&2; exit 1; }
say() { echo "make-deb: $*" >&2; }

[ $# -eq 2 ] || die "usage: scripts/make-deb.sh BIN OUTDIR"
bin=$1
outdir=$2
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
{ [ -f "$bin" ] && [ -x "$bin" ]; } || die "$bin is not an executable file"
for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
    command -v "$tool" >/dev/null || die "$tool is missing (make deps installs dpkg-dev and binutils)"
done

umask 022
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
# mktemp's 0700 would become the mode of the package's "./".
install -d -m 0755 "$root" "$root/DEBIAN"

# "shelf 0.16.0 (abc1234)"
version_line=$("$bin" --version) || die "$bin --version failed"
version=$(sed -n 's/^shelf \([0-9][0-9A-Za-z.+~]*\)\( .*\)\{0,1\}$/\1/p' <<<"$version_line")
[ -n "$version" ] || die "cannot read a version from '$version_line'"
commit=$(sed -n 's/^shelf [^ ]* (\([^)]*\))$/\1/p' <<<"$version_line")
arch=$(dpkg --print-architecture)
package=shelf
deb=$outdir/${package}_${version}_${arch}.deb

# The commit the binary names when git knows it, else the checkout's HEAD, else now.
git_ref=HEAD
if [ -n "$commit" ] && git -C "$repo" cat-file -e "$commit^{commit}" 2>/dev/null; then git_ref=$commit; fi
maintainer=${SHELF_DEB_MAINTAINER:-$(git -C "$repo" log -1 --format='%an <%ae>' "$git_ref" 2>/dev/null || true)}
[ -n "$maintainer" ] || die "no git history to take the Maintainer from: set SHELF_DEB_MAINTAINER='Name <email>'"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct "$git_ref" 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

# Every library the binary loads, its dependencies' included, must come from the system's library
# directories, where dpkg-shlibdeps can name the package that provides it.
foreign=$({ ldd "$bin" || true; } | awk '$2 == "=>" && ($3 == "not" || $3 !~ "^/(usr/)?lib(64|x?32)?/") { print "  " $1 " => " $3 }')
if [ -n "$foreign" ]; then
    if [ "${SHELF_DEB_ALLOW_FOREIGN_LIBS:-}" = 1 ]; then
        say "warning: SHELF_DEB_ALLOW_FOREIGN_LIBS=1: packaging $bin, which needs libraries no Debian package provides:"
        echo "$foreign" >&2
    else
        die "$bin needs libraries no Debian package provides (build it with --static-swift-stdlib, as make deb does):
$foreign"
    fi
fi

# /usr/bin/shelf stripped the way dh_strip strips an executable, and tried at once: a strip that
# broke the Swift metadata would show here rather than on a user's machine.
install -d "$root/usr/bin"
strip --remove-section=.comment --remove-section=.note -o "$root/usr/bin/shelf" "$bin"
chmod 0755 "$root/usr/bin/shelf"
shelf=$root/usr/bin/shelf
[ "$("$shelf" --version)" = "$version_line" ] || die "the stripped binary does not run: $("$shelf" --version 2>&1 | head -3)"

# The man page and completions describe exactly this binary's commands.
install -d "$root/usr/share/man/man1" "$root/usr/share/bash-completion/completions" \
    "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d"
"$shelf" help --man | gzip -9n >"$root/usr/share/man/man1/shelf.1.gz"
"$shelf" completions bash >"$root/usr/share/bash-completion/completions/shelf"
"$shelf" completions zsh >"$root/usr/share/zsh/vendor-completions/_shelf"
"$shelf" completions fish >"$root/usr/share/fish/vendor_completions.d/shelf.fish"

# contrib/shelf.service with the packaged binary's path and a header for its packaged life;
# bookworm's lintian and systemd still expect packaged units under /lib.
unit=$root/lib/systemd/system/shelf.service
install -d "$(dirname "$unit")"
{
    cat <<'EOF'
# Shelf's music server (`shelf serve`) as a system service, from the shelf package. It is not
# enabled on install: write /etc/shelf/config.toml (the example is in
# /usr/share/doc/shelf/examples/config.toml) and add the first user, then
#   systemctl enable --now shelf
#   systemctl reload shelf      # SIGHUP: reread /etc/shelf/config.toml, reopen the log
#   journalctl -u shelf -f      # the log (one line per event; `log-format = "json"` for JSON)
# Change it with `systemctl edit shelf` (see /usr/share/doc/shelf/README.Debian).
EOF
    sed -n '/^\[Unit\]/,$p' "$repo/contrib/shelf.service" |
        sed 's|^ExecStart=/usr/local/bin/shelf |ExecStart=/usr/bin/shelf |'
} >"$unit"
grep -q '^ExecStart=/usr/bin/shelf serve ' "$unit" || die "contrib/shelf.service has no 'ExecStart=/usr/local/bin/shelf serve' line to adapt"
chmod 0644 "$unit"

doc=$root/usr/share/doc/$package
install -d "$doc/examples"
install -m 0644 "$repo/contrib/debian/copyright" "$repo/contrib/debian/README.Debian" "$doc/"
install -m 0644 "$repo/contrib/config.toml" "$doc/examples/config.toml"
# A version without a Debian revision makes this a native package, whose changelog lintian wants
# as changelog.gz in the Debian format. The project keeps no changelog, so it has this release's
# entry only.
changelog_date=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
{
    echo "$package ($version) unstable; urgency=medium"
    echo
    echo "  * Shelf $version${commit:+, built from commit $commit}."
    echo
    echo " -- $maintainer  $changelog_date"
} | gzip -9n >"$doc/changelog.gz"

for script in postinst prerm postrm; do
    install -m 0755 "$repo/contrib/debian/$script" "$root/DEBIAN/$script"
done

# dpkg-shlibdeps reads the package name from a debian/control, so it gets a stand-in one.
install -d "$work/src/debian"
printf 'Source: %s\nMaintainer: %s\n\nPackage: %s\nArchitecture: any\n' "$package" "$maintainer" "$package" >"$work/src/debian/control"
shlibdeps_options=()
if [ "${SHELF_DEB_ALLOW_FOREIGN_LIBS:-}" = 1 ]; then shlibdeps_options+=(--ignore-missing-info); fi
shlibs=$(cd "$work/src" && dpkg-shlibdeps -O "${shlibdeps_options[@]}" "$shelf" | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || die "dpkg-shlibdeps found no dependencies for $bin"

# What dpkg-gencontrol counts: each file's size in KiB rounded up, plus one per other entry.
installed_size=$(cd "$root" && find . -path ./DEBIAN -prune -o \( -type f -printf 'file %s\n' \) -o -printf 'other\n' |
    awk '$1 == "file" { kib += int(($2 + 1023) / 1024); next } { kib += 1 } END { print kib }')

cat >"$root/DEBIAN/control" <<EOF
Package: $package
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: adduser, $shlibs
Recommends: ffmpeg
Suggests: mpv
Section: sound
Priority: optional
Description: music library engine, command-line tool and server
 Shelf keeps a local music library of any size (half a million tracks stay
 fast) in one SQLite store: tracks, artwork, playlists, users and a change
 history any client can sync from. Audio files are read through TagLib, or
 ffprobe for what TagLib cannot decode; tag edits are written back to the
 files, and tracks export to other formats through ffmpeg.
 .
 The shelf command imports, browses, searches, edits and exports the library;
 shelf serve runs the same engine as a server with a JSON API, a web player,
 streaming with transcoding, and the OpenSubsonic API for existing music apps.
 A systemd unit runs it as the shelf system user (not enabled on install; see
 README.Debian).
EOF

(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

mkdir -p "$outdir"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
echo "$deb"
