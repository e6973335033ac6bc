#!/bin/bash
# make-image.sh DEB [OUT_DIR]: an OCI image of Shelf, built from Debian's packages and Shelf's own
# .deb without pulling anything from a registry. mmdebstrap makes a minimal Debian root (apt,
# ffmpeg, curl for the health check, CA certificates) and installs the .deb into it; podman turns
# the root into an image with Shelf's settings as SHELF_* variables, the `shelf` user, the /music
# and /data volumes and the port, and writes OUT_DIR/shelf-VERSION.oci.tar.
#
# Settings from the environment: SHELF_IMAGE_SUITE (bookworm), SHELF_IMAGE_MIRROR (Debian's).
set -euo pipefail

deb=${1:?usage: make-image.sh DEB [OUT_DIR]}
out=${2:-dist}
version=$(dpkg-deb -f "$deb" Version)
suite=${SHELF_IMAGE_SUITE:-bookworm}
mirror=${SHELF_IMAGE_MIRROR:-http://deb.debian.org/debian}
tag="localhost/shelf:$version"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$deb" "$work/shelf.deb"
mkdir -p "$out"

# Documentation and man pages are left out of the root (nobody reads them in a container); the
# apt lists and caches are emptied once the packages are in.
mmdebstrap --variant=apt --quiet \
    --include=ca-certificates,curl,ffmpeg \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --customize-hook="copy-in $work/shelf.deb /tmp" \
    --customize-hook='chroot "$1" apt-get install --yes --no-install-recommends /tmp/shelf.deb' \
    --customize-hook='chroot "$1" sh -c "install -d -o shelf -g shelf -m 0750 /data && install -d -m 0755 /music && rm -f /tmp/shelf.deb && apt-get clean && rm -rf /var/lib/apt/lists/*"' \
    "$suite" "$work/root.tar" "$mirror"

# The image's settings: everything through the settings table's variables, so a deployment changes
# them with `-e SHELF_…` and needs no config file. A library without users starts and logs how to
# make the first, unless SHELF_ADMIN_USER and SHELF_ADMIN_PASSWORD_FILE make one.
podman import --quiet \
    --change 'USER shelf' \
    --change 'WORKDIR /data' \
    --change 'ENV SHELF_LIBRARY=/data' \
    --change 'ENV SHELF_LISTEN=0.0.0.0:4040' \
    --change 'ENV SHELF_MUSIC=/music' \
    --change 'ENV SHELF_START_WITHOUT_USERS=true' \
    --change 'EXPOSE 4040/tcp' \
    --change 'VOLUME ["/data", "/music"]' \
    --change 'STOPSIGNAL SIGTERM' \
    --change 'ENTRYPOINT ["/usr/bin/shelf"]' \
    --change 'CMD ["serve"]' \
    --change "LABEL org.opencontainers.image.title=Shelf org.opencontainers.image.version=$version" \
    "$work/root.tar" "$tag" >/dev/null
rm -f "$out/shelf-$version.oci.tar"
podman save --quiet --format oci-archive -o "$out/shelf-$version.oci.tar" "$tag"
echo "$out/shelf-$version.oci.tar ($(du -h "$out/shelf-$version.oci.tar" | cut -f1)); loaded as $tag"
