#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# bench/remote-gpu/run-device.sh CARRY_DIR
#
# The remote flow (`--remote HOST`) end to end on a GPU host that has no second machine to
# reach it from: the host serves itself over a real OpenSSH server on 127.0.0.1, with a host key
# and a user key made for the run, and fusebench on the same host is the client. Everything
# `--remote` does goes through ssh as it would from a laptop: the runner pack is copied into the
# host's cache and checked, the model and inputs are sent, profile/run/check run there with the
# cuda target, and the results come back. CARRY_DIR holds:
#   fusebench-headless.tar.xz  scripts/gpu-pack's pack: the client, and the runner it sends
#   openssh.tar.xz             gather-openssh.sh's OpenSSH, for a host without one installed
# The model is ResNet-50 of bench/models/make-resnet50.py (made here with the host's Python).
# Output on stdout and in $OUT/remote-gpu.txt; the remote and local profiles in $OUT.
set -u
carry=$(cd "${1:?usage: run-device.sh CARRY_DIR}" && pwd)
top=$(pwd)
work=${FB_WORK:-/tmp/fb-remote-gpu}
out=${OUT:-$work/out}
target=${FB_TARGET:-cuda}   # cpu tries the script on a machine without a GPU
mkdir -p "$out" "$work/client" "$work/ssh"
log=$out/remote-gpu.txt
say () { echo "$@" | tee -a "$log"; }
step () { say; say "\$ $*"; "$@" 2>&1 | tee -a "$log"; say "(exit ${PIPESTATUS[0]})"; }

tar -xJf "$carry/fusebench-headless.tar.xz" -C "$work/client" || exit 1
tar -xJf "$carry/openssh.tar.xz" -C "$work" || exit 1
fb=$work/client/fusebench/bin/fusebench
ossh=$work/openssh

# The client's ssh and ssh-keygen see the carried libraries; fusebench and the sessions there
# do not (sshd gives each session an environment of its own).
mkdir -p "$work/path"
for b in ssh ssh-keygen; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$ossh/lib" "$ossh/bin/$b" > "$work/path/$b"
  chmod +x "$work/path/$b"
done
export PATH=$work/path:$PATH

# The server: privilege separation wants its user and its empty folder when sshd runs as root.
id sshd >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /run/sshd --shell /usr/sbin/nologin sshd
mkdir -p -m 755 /run/sshd
k=$work/ssh
rm -f "$k"/host_key* "$k"/user_key*
ssh-keygen -q -t ed25519 -N '' -C host -f "$k/host_key"
ssh-keygen -q -t ed25519 -N '' -C user -f "$k/user_key"
cp "$k/user_key.pub" "$k/authorized_keys"
echo "gpu-host-alias $(cut -d' ' -f1,2 "$k/host_key.pub")" > "$k/known_hosts"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$k/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $k/host_key
PidFile $k/sshd.pid
AuthorizedKeysFile $k/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowTcpForwarding no
X11Forwarding no
PrintMotd no
Subsystem sftp $ossh/bin/sftp-server
CONF
LD_LIBRARY_PATH=$ossh/lib "$ossh/bin/sshd" -D -e -f "$k/sshd_config" 2> "$k/sshd.log" &
sshd_pid=$!
trap 'kill $sshd_pid 2>/dev/null' EXIT
for _ in $(seq 50); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
cat > "$k/config" <<CONF
Host gpu-host
  HostName 127.0.0.1
  Port $port
  User $(id -un)
  IdentityFile $k/user_key
  IdentitiesOnly yes
  IdentityAgent none
  HostKeyAlias gpu-host-alias
  UserKnownHostsFile $k/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
CONF
export FUSEBENCH_SSH_CONFIG=$k/config
export FUSEBENCH_REMOTE_RUNNER=$carry/fusebench-headless.tar.xz

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$log"
say "OpenSSH: $(LD_LIBRARY_PATH=$ossh/lib "$ossh/bin/ssh" -V 2>&1); sshd on 127.0.0.1:$port"
m=${FB_MODEL_DIR:-$work/resnet50}   # a case folder (model.onnx, test_data_set_0) to use another model
[ -f "$m/model.onnx" ] || python3 "$top/bench/models/make-resnet50.py" "$m" > "$work/make.log" 2>&1 || { cat "$work/make.log"; exit 1; }
[ -d "$m/test_data_set_0" ] || ls "$m"

step ssh -F "$k/config" gpu-host 'echo connected as $(id -un) on $(hostname)'
# The runner's cache there, emptied so that the first call shows the copy.
rcache=$(ssh -F "$k/config" gpu-host 'echo ${XDG_CACHE_HOME:-$HOME/.cache}/fusebench/runner')
[ -n "$rcache" ] && rm -rf "$rcache"
step /usr/bin/time -f '%e s' "$fb" profile "$m/model.onnx" --remote gpu-host --target "$target" \
  -o "$out/remote.profile.json" --chrome-trace "$out/remote.trace.json"
step find "$rcache" -maxdepth 2
# A second profile finds the runner in place and checked: nothing is copied again.
step /usr/bin/time -f '%e s' "$fb" profile "$m/model.onnx" --remote gpu-host --target "$target" \
  -o "$out/remote2.profile.json"
step "$fb" run "$m/model.onnx" --remote gpu-host --target "$target" --input-dir "$m/test_data_set_0" \
  --iterations 100 --json --output-dir "$out/remote-outputs"
step ls -l "$out/remote-outputs"
step "$fb" check --remote gpu-host --target "$target" "$top/tests/cases/conv" "$top/tests/cases/gpt2_struct" "$top/tests/cases/binary"
# A damaged runner there is replaced, never run.
bin=$(find "$rcache" -path '*/bin/fusebench' -type f | head -1)
[ -n "$bin" ] && { say "damaging $bin"; chmod u+w "$bin"; printf 'garbage' > "$bin"; }
step "$fb" check --remote gpu-host --target "$target" "$top/tests/cases/conv" "$top/tests/cases/gpt2_struct" "$top/tests/cases/binary"
# The same profile made locally, for the medians side by side.
step "$fb" profile "$m/model.onnx" --target "$target" -o "$out/local.profile.json"
for p in remote remote2 local; do
  python3 - "$out/$p.profile.json" "$p" <<'PY' | tee -a "$log"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(sys.argv[2], "profile: none", e); sys.exit(0)
w = d.get("wall_ms", {})
print("%-8s %s; wall median %.4f ms (untraced replays), busy %.4f ms, %d kernels; %s" % (
    sys.argv[2], d.get("device", {}).get("name"), w.get("median", float("nan")),
    d.get("busy_ms", float("nan")), len(d.get("kernels", [])), (d.get("diagnosis") or ["-"])[0]))
PY
done
tail -5 "$k/sshd.log" >> "$log"
