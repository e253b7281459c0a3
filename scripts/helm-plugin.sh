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
    sub="$1"
    shift
    given=()
    # helm keeps its global flags (-n/--namespace among them) and hands them over in the
    # environment; pass the namespace on, as `helm template` would use it.
    if [ -n "${HELM_NAMESPACE:-}" ]; then
      given+=(--namespace "$HELM_NAMESPACE")
    fi
    # Render with the helm that runs the plugin, unless --helm was given.
    helm_given=0
    for arg in "$@"; do
      case "$arg" in --helm | --helm=*) helm_given=1 ;; esac
    done
    if [ "$helm_given" = 0 ] && [ -n "${HELM_BIN:-}" ]; then
      given+=(--helm "$HELM_BIN")
    fi
    exec "$bin" "$sub" ${given[@]+"${given[@]}"} "$@"
    ;;
esac
exec "$bin" "$@"
