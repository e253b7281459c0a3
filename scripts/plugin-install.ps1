# The helm plugin's download on Windows when helm could not run the sh install hook (run by
# scripts/helm-plugin.ps1 on first use), as scripts/plugin-install.sh elsewhere: downloads the release archive of the plugin's version for
# TARGET, verifies it against the release's SHA256SUMS and puts chartseq.exe in
# $env:HELM_PLUGIN_DIR\bin. When that is impossible it says what to do instead, once, and exits 1.
# With CHARTSEQ_BIN naming a binary (which the plugin then runs) nothing is downloaded.
#
# usage: plugin-install.ps1 TARGET | plugin-install.ps1 unsupported
param([Parameter(Mandatory = $true)][string]$Target)
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
$dir = $env:HELM_PLUGIN_DIR
if (-not $dir) { $dir = Split-Path -Parent $PSScriptRoot }
$version = (Select-String -Path (Join-Path $dir 'plugin.yaml') -Pattern '^version:\s*"?([^"\s]+)"?\s*$' |
    Select-Object -First 1).Matches[0].Groups[1].Value

function Todo([string]$why) {
  [Console]::Error.WriteLine("helm chartseq: $why; install chartseq $version yourself (a binary from https://github.com/chartseq/chartseq/releases/tag/v$version, or: cargo install --locked chartseq --version $version) and put it on PATH or name it in CHARTSEQ_BIN; the plugin then runs it")
  exit 1
}

if ($env:CHARTSEQ_BIN -and (Test-Path -PathType Leaf $env:CHARTSEQ_BIN)) {
  [Console]::Error.WriteLine("helm chartseq: CHARTSEQ_BIN names $($env:CHARTSEQ_BIN), which the plugin runs; nothing downloaded")
  exit 0
}
if ($Target -eq 'unsupported') { Todo "no chartseq release binary is built for this Windows architecture" }
$base = $env:CHARTSEQ_RELEASE_URL
if (-not $base) { $base = 'https://github.com/chartseq/chartseq/releases/download' }
$base = $base.TrimEnd('/') + "/v$version"
$name = "chartseq-$version-$Target"
$archive = "$name.zip"
$work = Join-Path ([IO.Path]::GetTempPath()) ([Guid]::NewGuid().ToString())
New-Item -ItemType Directory -Path $work | Out-Null
try {
  try {
    Invoke-WebRequest -UseBasicParsing -Uri "$base/SHA256SUMS" -OutFile (Join-Path $work 'SHA256SUMS')
    Invoke-WebRequest -UseBasicParsing -Uri "$base/$archive" -OutFile (Join-Path $work $archive)
  } catch {
    Todo "the chartseq $version release binary for $Target could not be downloaded ($($_.Exception.Message))"
  }
  $want = $null
  foreach ($line in Get-Content (Join-Path $work 'SHA256SUMS')) {
    $parts = $line -split '\s+', 2
    if ($parts.Count -eq 2 -and ($parts[1] -eq $archive -or $parts[1] -eq "*$archive")) { $want = $parts[0].ToLower() }
  }
  $got = (Get-FileHash -Algorithm SHA256 -Path (Join-Path $work $archive)).Hash.ToLower()
  if (-not $want -or $got -ne $want) {
    Todo "the downloaded chartseq $version failed verification against its SHA256SUMS, so nothing was installed"
  }
  Expand-Archive -LiteralPath (Join-Path $work $archive) -DestinationPath (Join-Path $work 'x')
  $bin = Join-Path $dir 'bin'
  New-Item -ItemType Directory -Force -Path $bin | Out-Null
  Copy-Item -Force (Join-Path $work "x\$name\chartseq.exe") (Join-Path $bin 'chartseq.exe')
  [Console]::Error.WriteLine("chartseq install: installed chartseq $version ($Target) into $bin, verified against SHA256SUMS")
} finally {
  Remove-Item -Recurse -Force $work -ErrorAction SilentlyContinue
}
