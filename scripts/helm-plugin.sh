#!/usr/bin/env bash
# The `helm chartseq` plugin command (plugin.yaml): runs chartseq with the calling helm as
# the chart renderer, so `helm chartseq lint ./chart -f values.yaml` lints what this helm
# would install. Arguments pass through unchanged.
set -euo pipefail
bin="${CHARTSEQ_BIN:-}"
if [ -z "$bin" ] && [ -x "${HELM_PLUGIN_DIR:-}/bin/chartseq" ]; then
  bin="$HELM_PLUGIN_DIR/bin/chartseq"
fi
if [ -z "$bin" ]; then
  bin="$(command -v chartseq || true)"
fi
if [ -z "$bin" ]; then
  echo "helm chartseq: chartseq is not installed; run: cargo install --locked --path \"${HELM_PLUGIN_DIR:-.}\" --root \"${HELM_PLUGIN_DIR:-.}\"" >&2
  exit 2
fi
case "${1:-}" in
  lint | plan | template)
    # Render with the helm that runs the plugin, unless --helm was given.
    for arg in "$@"; do
      case "$arg" in --helm | --helm=*) exec "$bin" "$@" ;; esac
    done
    if [ -n "${HELM_BIN:-}" ]; then
      sub="$1"
      shift
      exec "$bin" "$sub" --helm "$HELM_BIN" "$@"
    fi
    ;;
esac
exec "$bin" "$@"
