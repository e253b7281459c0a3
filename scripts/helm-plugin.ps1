# The `helm chartseq` plugin command on Windows (plugin.yaml), as scripts/helm-plugin.sh
# elsewhere: runs chartseq with helm's global settings, which helm hands over in the
# environment, passed on as flags, and renders charts with the calling helm.
$ErrorActionPreference = 'Stop'
$bin = $env:CHARTSEQ_BIN
if (-not $bin -and $env:HELM_PLUGIN_DIR -and (Test-Path (Join-Path $env:HELM_PLUGIN_DIR 'bin\chartseq.exe'))) {
  $bin = Join-Path $env:HELM_PLUGIN_DIR 'bin\chartseq.exe'
}
if (-not $bin) {
  $found = Get-Command chartseq -ErrorAction SilentlyContinue
  if ($found) { $bin = $found.Source }
}
if (-not $bin -and $env:HELM_PLUGIN_DIR) {
  # The install hook needs sh, which Windows may lack: download on first use.
  $target = if ($env:PROCESSOR_ARCHITECTURE -eq 'AMD64') { 'x86_64-pc-windows-msvc' } else { 'unsupported' }
  & powershell -NoProfile -ExecutionPolicy Bypass -File (Join-Path $PSScriptRoot 'plugin-install.ps1') $target
  if ($LASTEXITCODE -ne 0) { exit 2 }
  $bin = Join-Path $env:HELM_PLUGIN_DIR 'bin\chartseq.exe'
}
if (-not $bin) {
  [Console]::Error.WriteLine('helm chartseq: chartseq is not installed; put it on PATH or name it in CHARTSEQ_BIN')
  exit 2
}
$helm = $env:HELM_BIN
if ($helm -and -not ($helm -match '[\\/]')) {
  $found = Get-Command $helm -ErrorAction SilentlyContinue
  $helm = if ($found) { $found.Source } else { '' }
}
$rest = @($args)
$sub = if ($rest.Count -gt 0) { $rest[0] } else { '' }
$renders = $sub -in @('lint', 'plan', 'template', 'apply')
$cluster = $sub -in @('apply', 'uninstall', 'rollback', 'history', 'status', 'list')
if (-not ($renders -or $cluster)) {
  & $bin @rest
  exit $LASTEXITCODE
}
$given = @()
if ($env:HELM_NAMESPACE) { $given += @('--namespace', $env:HELM_NAMESPACE) }
if ($cluster) {
  if ($env:HELM_KUBECONTEXT) { $given += @('--kube-context', $env:HELM_KUBECONTEXT) }
  if ($env:HELM_KUBEAPISERVER) { $given += @('--kube-apiserver', $env:HELM_KUBEAPISERVER) }
  if ($env:HELM_KUBETOKEN) { $given += @('--kube-token', $env:HELM_KUBETOKEN) }
  if ($env:HELM_KUBEINSECURE_SKIP_TLS_VERIFY -eq 'true') { $given += '--kube-insecure-skip-tls-verify' }
}
$tail = @($rest | Select-Object -Skip 1)
if ($renders -and $helm -and -not ($tail | Where-Object { $_ -eq '--helm' -or $_ -like '--helm=*' })) {
  $given += @('--helm', $helm)
}
& $bin $sub @given @tail
exit $LASTEXITCODE
