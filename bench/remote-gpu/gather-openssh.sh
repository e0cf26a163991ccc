#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# bench/remote-gpu/gather-openssh.sh OUT.tar.xz
#
# Packs this machine's OpenSSH client and server (ssh, ssh-keygen, sshd, sftp-server) with the
# shared libraries they load, except the C library itself, for a GPU host that has no OpenSSH
# installed and no package manager to install it (run-device.sh unpacks it there). The C library
# stays the host's own: a newer one runs binaries built against an older one.
set -euo pipefail
out=${1:?usage: gather-openssh.sh OUT.tar.xz}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/openssh/bin" "$stage/openssh/lib"
for b in /usr/bin/ssh /usr/bin/ssh-keygen /usr/sbin/sshd /usr/lib/openssh/sftp-server; do
  [ -x "$b" ] || { echo "gather-openssh: $b is missing (apt-get install openssh-server openssh-client)" >&2; exit 1; }
  cp "$b" "$stage/openssh/bin/"
  ldd "$b" | awk '$3 ~ /^\// { print $3 }' | while read -r lib; do
    case $(basename "$lib") in
      libc.so.*|ld-linux*|libresolv.so.*|libm.so.*|libdl.so.*|libpthread.so.*) ;;
      *) cp -L "$lib" "$stage/openssh/lib/" ;;
    esac
  done
done
tar -cJf "$out.part" -C "$stage" openssh
mv "$out.part" "$out"
echo "gather-openssh: $(du -h "$out" | cut -f1) in $out"
