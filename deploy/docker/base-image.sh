#!/usr/bin/env bash
# Builds a local Debian bookworm base image with Python (the Dockerfile's BASE) from Debian's
# packages, for machines that reach Debian's and Python's package indexes but no image registry.
#   deploy/docker/base-image.sh [TAG]     (default gecserve-base:bookworm; root: debootstrap)
set -euo pipefail
tag=${1:-gecserve-base:bookworm}
root=$(mktemp -d /tmp/gecserve-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" \
  http://deb.debian.org/debian >/dev/null
# pip inside the image verifies the index with the machine's CA bundle (it may hold a local CA).
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import \
  --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "$tag"
