#!/usr/bin/env bash
# The `helm chartseq` plugin command (plugin.yaml): runs chartseq as part of the calling helm.
# helm keeps its global flags (-n/--namespace, --kube-context, --kubeconfig, --kube-apiserver,
# ...) for itself and hands them over in the environment; this script passes them on to every
# command, and renders charts with that same helm, so `helm chartseq lint ./chart -f v.yaml`
# lints what this helm would install and `helm chartseq uninstall shop -n shop` acts on the
# namespace helm was given. Other arguments pass through unchanged.
set -euo pipefail
bin="${CHARTSEQ_BIN:-}"
if [ -z "$bin" ] && [ -x "${HELM_PLUGIN_DIR:-}/bin/chartseq" ]; then
  bin="$HELM_PLUGIN_DIR/bin/chartseq"
fi
if [ -z "$bin" ]; then
  bin="$(command -v chartseq || true)"
fi
if [ -z "$bin" ] && [ -n "${HELM_PLUGIN_DIR:-}" ]; then
  # The install hook did not run or did not finish (no network then): download on first use.
  "$(dirname "$0")/plugin-install.sh" >&2 || exit 2
  bin="$HELM_PLUGIN_DIR/bin/chartseq"
fi
if [ -z "$bin" ]; then
  echo "helm chartseq: chartseq is not installed; put it on PATH or name it in CHARTSEQ_BIN" >&2
  exit 2
fi

# helm sets HELM_BIN to how it was started: a bare `helm` when found on PATH.
helm_bin="${HELM_BIN:-}"
case "$helm_bin" in
  "" | */*) ;;
  *) helm_bin="$(command -v "$helm_bin" || true)" ;;
esac

sub="${1:-}"
given=()
renders=0
case "$sub" in
  lint | plan | template) renders=1 ;;
  apply)
    renders=1
    cluster=1
    ;;
  uninstall | rollback | history | status | list) cluster=1 ;;
  *) exec "$bin" "$@" ;;
esac
shift

# The namespace helm resolved (-n, else the kubeconfig context's, else default).
if [ -n "${HELM_NAMESPACE:-}" ]; then
  given+=(--namespace "$HELM_NAMESPACE")
fi
if [ "${cluster:-0}" = 1 ]; then
  # KUBECONFIG, HELM_DRIVER and HELM_MAX_HISTORY are read from the environment by chartseq
  # itself, as helm reads them.
  if [ -n "${HELM_KUBECONTEXT:-}" ]; then
    given+=(--kube-context "$HELM_KUBECONTEXT")
  fi
  if [ -n "${HELM_KUBEAPISERVER:-}" ]; then
    given+=(--kube-apiserver "$HELM_KUBEAPISERVER")
  fi
  if [ -n "${HELM_KUBETOKEN:-}" ]; then
    given+=(--kube-token "$HELM_KUBETOKEN")
  fi
  if [ "${HELM_KUBEINSECURE_SKIP_TLS_VERIFY:-false}" = true ]; then
    given+=(--kube-insecure-skip-tls-verify)
  fi
fi
# Render with the helm that runs the plugin, unless --helm was given.
if [ "$renders" = 1 ] && [ -n "$helm_bin" ]; then
  helm_given=0
  for arg in "$@"; do
    case "$arg" in --helm | --helm=*) helm_given=1 ;; esac
  done
  if [ "$helm_given" = 0 ]; then
    given+=(--helm "$helm_bin")
  fi
fi
exec "$bin" "$sub" ${given[@]+"${given[@]}"} "$@"
