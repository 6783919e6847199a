#!/usr/bin/env bash
# Build the local test control plane (kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd and kwok, optionally helm and promtool) from the Go module proxy into
# a cache directory:
#
#   ${CRONCTL_CACHE:-$HOME/.cache/cronctl}/control-plane/<kube version>/bin/
#       kube-apiserver  kube-controller-manager  kube-scheduler  etcd  kwok  [helm]  [promtool]
#
# Two planes are pinned: the main one (the newest Kubernetes minor the Go module proxy serves,
# scripts/control-plane/go.mod), which every cluster test runs on, and with --oldest the oldest
# minor the chart claims (scripts/control-plane/oldest/go.mod), which the smoke subset runs on
# (pytest -m smoke; scripts/test runs both).
#
# The versions are pinned by the wrapper modules in scripts/control-plane/
# (go.mod + go.sum): k8s.io/kubernetes for kube-apiserver,
# kube-controller-manager and kube-scheduler, the etcd server that
# k8s.io/kubernetes itself pins for etcd, sigs.k8s.io/kwok (simulated Nodes
# and Pods) in scripts/control-plane/kwok/, and helm.sh/helm in
# scripts/control-plane/helm/, and github.com/prometheus/prometheus's promtool
# (the alert rules' checker and unit-test runner) in
# scripts/control-plane/promtool/. Binaries are static (CGO_ENABLED=0) and carry
# the version ldflags upstream uses, so /version reports the real version.
#
# If the binaries are already in the cache and were built from the same
# inputs (a hash of the wrapper modules and this script's build revision),
# this does nothing and exits 0 at once; if only some binaries are missing,
# it builds just those. Safe to run concurrently (flock).
#
# Usage: scripts/build-control-plane.sh [--oldest] [--with-helm] [--with-promtool] [--force] [--print-bin-dir] [--check]
#   --oldest         the plane of the oldest Kubernetes minor the chart claims
#   --with-helm      also build helm (needed by the chart tests)
#   --with-promtool  also build promtool (needed by the alert rule tests)
#   --force          rebuild even if the cache looks complete
#   --print-bin-dir  print the bin directory and exit (builds nothing)
#   --check          exit 0 if the cache is complete and current, else 1 (builds nothing)
set -euo pipefail

# Everything runs inside main(), so bash has parsed the whole file before it
# starts: editing this script while a build runs cannot derail that build.
main() {

# Bump when the build commands below change in a way that alters the output.
BUILD_REV=1

local here; here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mod_dir="$here/control-plane"
helm_dir="$mod_dir/helm"
kwok_dir="$mod_dir/kwok"
promtool_dir="$mod_dir/promtool"
plane_dir="$mod_dir"  # the kube-* and etcd binaries' module (--oldest: the oldest claimed minor's)

with_helm=0
with_promtool=0
force=0
print_bin_dir=0
check=0
for arg in "$@"; do
    case "$arg" in
        --oldest) plane_dir="$mod_dir/oldest" ;;
        --with-helm) with_helm=1 ;;
        --with-promtool) with_promtool=1 ;;
        --force) force=1 ;;
        --print-bin-dir) print_bin_dir=1 ;;
        --check) check=1 ;;
        -h|--help) sed -n '2,35p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-control-plane: unknown argument: $arg" >&2; exit 2 ;;
    esac
done

# Versions straight from the committed go.mod files (no go command needed).
mod_version() { # mod_version FILE MODULE
    awk -v m="$2" '($1 == m || ($1 == "require" && $2 == m)) && $0 !~ /=>/ {
        for (i = 1; i <= NF; i++) if ($i ~ /^v[0-9]/) { print $i; exit } }' "$1"
}
kube_version="$(mod_version "$plane_dir/go.mod" k8s.io/kubernetes)"
etcd_version="$(mod_version "$plane_dir/go.mod" go.etcd.io/etcd/server/v3)"
helm_version="$(mod_version "$helm_dir/go.mod" helm.sh/helm/v3)"
kwok_version="$(mod_version "$kwok_dir/go.mod" sigs.k8s.io/kwok)"
promtool_version="$(mod_version "$promtool_dir/go.mod" github.com/prometheus/prometheus)"
if [[ -z "$kube_version" || -z "$etcd_version" || -z "$helm_version" || -z "$kwok_version" || -z "$promtool_version" ]]; then
    echo "build-control-plane: cannot read versions from the go.mod files in $mod_dir" >&2
    exit 1
fi

cache_root="${CRONCTL_CACHE:-$HOME/.cache/cronctl}/control-plane"
bin_dir="$cache_root/$kube_version/bin"
if (( print_bin_dir )); then
    echo "$bin_dir"
    exit 0
fi

inputs_hash() { # inputs_hash FILE...
    { echo "rev=$BUILD_REV"; cat "$@"; } | sha256sum | cut -c1-16
}
cp_stamp="$(inputs_hash "$plane_dir/go.mod" "$plane_dir/go.sum" "$plane_dir/cmd/etcd/main.go")"
helm_stamp="$(inputs_hash "$helm_dir/go.mod" "$helm_dir/go.sum")"
kwok_stamp="$(inputs_hash "$kwok_dir/go.mod" "$kwok_dir/go.sum")"
promtool_stamp="$(inputs_hash "$promtool_dir/go.mod" "$promtool_dir/go.sum")"

cp_bins=(kube-apiserver kube-controller-manager kube-scheduler etcd)
# The control-plane binaries to build: all of them when the stamp does not
# match the inputs (or --force), else only those missing from the cache.
cp_todo() {
    local b
    if (( force )) || [[ "$(cat "$bin_dir/.stamp-control-plane" 2>/dev/null)" != "$cp_stamp" ]]; then
        echo "${cp_bins[*]}"
        return
    fi
    for b in "${cp_bins[@]}"; do [[ -x "$bin_dir/$b" ]] || echo "$b"; done
}
cp_ok() {
    [[ -z "$(cp_todo)" ]]
}
helm_ok() {
    [[ -x "$bin_dir/helm" ]] && [[ "$(cat "$bin_dir/.stamp-helm" 2>/dev/null)" == "$helm_stamp" ]]
}
kwok_ok() {
    [[ -x "$bin_dir/kwok" ]] && [[ "$(cat "$bin_dir/.stamp-kwok" 2>/dev/null)" == "$kwok_stamp" ]]
}
promtool_ok() {
    [[ -x "$bin_dir/promtool" ]] && [[ "$(cat "$bin_dir/.stamp-promtool" 2>/dev/null)" == "$promtool_stamp" ]]
}
up_to_date() {
    (( force == 0 )) && cp_ok && kwok_ok && { (( with_helm == 0 )) || helm_ok; } \
        && { (( with_promtool == 0 )) || promtool_ok; }
}

if (( check )); then
    up_to_date
    exit $?
fi
if up_to_date; then
    echo "build-control-plane: up to date: $bin_dir (kube-apiserver, kube-controller-manager and kube-scheduler $kube_version, etcd $etcd_version, kwok $kwok_version$( ((with_helm)) && echo ", helm $helm_version")$( ((with_promtool)) && echo ", promtool of prometheus $promtool_version"))"
    exit 0
fi

mkdir -p "$bin_dir"
# Serialise concurrent builds; whoever waited re-checks the cache.
exec 9>"$cache_root/$kube_version/.lock"
if ! flock -n 9; then
    echo "build-control-plane: another build holds $cache_root/$kube_version/.lock; waiting..."
    flock 9
    if up_to_date; then
        echo "build-control-plane: up to date after waiting: $bin_dir"
        exit 0
    fi
fi

GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
if [[ ! -x "$GO" ]]; then
    echo "build-control-plane: no go toolchain found (set GO=/path/to/go)" >&2
    exit 1
fi
export CGO_ENABLED=0 GOTOOLCHAIN=local GOWORK=off GOFLAGS="-mod=mod -buildvcs=false"
echo "build-control-plane: $("$GO" version); GOMODCACHE=$("$GO" env GOMODCACHE) GOCACHE=$("$GO" env GOCACHE)"

tmp_out="$(mktemp -d "$cache_root/$kube_version/.build.XXXXXX")"
trap 'rm -rf "$tmp_out"' EXIT
t_all=$SECONDS

step() { echo "build-control-plane: [$(( SECONDS - t_all ))s] $*"; }

todo=" $(cp_todo | tr '\n' ' ') "
if [[ "$todo" != "  " ]]; then
    cd "$plane_dir"
    wants() { [[ "$todo" == *" $1 "* ]]; }
    pkgs=()
    wants kube-apiserver && pkgs+=(k8s.io/kubernetes/cmd/kube-apiserver)
    wants kube-controller-manager && pkgs+=(k8s.io/kubernetes/cmd/kube-controller-manager)
    wants kube-scheduler && pkgs+=(k8s.io/kubernetes/cmd/kube-scheduler)
    wants etcd && pkgs+=(./cmd/etcd)
    step "to build:${todo% }; downloading modules (kubernetes $kube_version, etcd $etcd_version)"
    t=$SECONDS
    if ! "$GO" list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' \
            "${pkgs[@]}" >/dev/null 2>"$tmp_out/list.log"; then
        cat "$tmp_out/list.log" >&2
        exit 1
    fi
    step "modules ready in $(( SECONDS - t ))s ($(grep -c '^go: downloading' "$tmp_out/list.log" || true) downloaded)"

    build_date="$("$GO" list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes 2>/dev/null || true)"
    [[ -n "$build_date" ]] || build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    major="${kube_version#v}"; major="${major%%.*}"
    minor="${kube_version#v*.}"; minor="${minor%%.*}"
    ldflags="-s -w"
    # Same fields as k/k hack/lib/version.sh (kube::version::ldflags). The
    # module proxy does not tell the git commit, so gitCommit stays empty and
    # the tree state says the source came from an archive.
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
        ldflags+=" -X $pkg.gitTreeState=archive -X $pkg.buildDate=$build_date"
    done

    built=()
    # kube-controller-manager and kube-scheduler share most packages with
    # kube-apiserver, so building them after it reuses the Go build cache:
    # their step times are the extra cost of having them.
    for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
        wants "$cmd" || continue
        step "building $cmd $kube_version$( [[ $cmd == kube-apiserver ]] && echo " (this is the slow part)")"
        t=$SECONDS
        "$GO" build -trimpath -tags selinux,notest -ldflags "$ldflags" \
            -o "$tmp_out/$cmd" "k8s.io/kubernetes/cmd/$cmd"
        step "$cmd built in $(( SECONDS - t ))s"
        "$tmp_out/$cmd" --version
        built+=("$tmp_out/$cmd")
    done

    if wants etcd; then
        step "building etcd $etcd_version"
        t=$SECONDS
        "$GO" build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$etcd_version" \
            -o "$tmp_out/etcd" ./cmd/etcd
        step "etcd built in $(( SECONDS - t ))s"
        "$tmp_out/etcd" --version | head -1
        built+=("$tmp_out/etcd")
    fi

    # Stamp last: a build interrupted before this point leaves the old
    # stamp, so the next run still sees what is missing or stale.
    mv -f "${built[@]}" "$bin_dir/"
    echo "$cp_stamp" > "$bin_dir/.stamp-control-plane"
fi

# kwok is one module for both planes: --oldest copies the main plane's when its stamp is this one.
main_bin_dir="$cache_root/$(mod_version "$mod_dir/go.mod" k8s.io/kubernetes)/bin"
if (( force )) || ! kwok_ok; then
    if (( ! force )) && [[ "$main_bin_dir" != "$bin_dir" && -x "$main_bin_dir/kwok" ]] \
            && [[ "$(cat "$main_bin_dir/.stamp-kwok" 2>/dev/null)" == "$kwok_stamp" ]]; then
        step "kwok $kwok_version: copied from the main plane's $main_bin_dir (the same module and stamp)"
        cp -f "$main_bin_dir/kwok" "$tmp_out/kwok"
    else
        cd "$kwok_dir"
        step "building kwok $kwok_version"
        t=$SECONDS
        "$GO" build -trimpath -ldflags "-s -w" \
            -o "$tmp_out/kwok" sigs.k8s.io/kwok/cmd/kwok
        step "kwok built in $(( SECONDS - t ))s"
    fi
    "$tmp_out/kwok" --version 2>/dev/null | head -1 || true
    mv -f "$tmp_out/kwok" "$bin_dir/"
    echo "$kwok_stamp" > "$bin_dir/.stamp-kwok"
fi

if (( with_helm )) && { (( force )) || ! helm_ok; }; then
    cd "$helm_dir"
    step "building helm $helm_version"
    t=$SECONDS
    client_go="$("$GO" list -m -f '{{.Version}}' k8s.io/client-go)"   # v0.MINOR.PATCH
    k8s_minor="${client_go#v0.}"; k8s_minor="${k8s_minor%%.*}"
    hv=helm.sh/helm/v3
    ldflags="-s -w -X $hv/internal/version.version=$helm_version -X $hv/internal/version.gitTreeState=clean"
    ldflags+=" -X $hv/pkg/lint/rules.k8sVersionMajor=1 -X $hv/pkg/lint/rules.k8sVersionMinor=$k8s_minor"
    ldflags+=" -X $hv/pkg/chartutil.k8sVersionMajor=1 -X $hv/pkg/chartutil.k8sVersionMinor=$k8s_minor"
    "$GO" build -trimpath -ldflags "$ldflags" -o "$tmp_out/helm" helm.sh/helm/v3/cmd/helm
    step "helm built in $(( SECONDS - t ))s"
    "$tmp_out/helm" version --short
    mv -f "$tmp_out/helm" "$bin_dir/"
    echo "$helm_stamp" > "$bin_dir/.stamp-helm"
fi

if (( with_promtool )) && { (( force )) || ! promtool_ok; }; then
    cd "$promtool_dir"
    # The module's v0.3MM.P is Prometheus 3.MM.P (upstream tags both).
    prom_release="${promtool_version#v0.}"; prom_release="3.${prom_release#3}"
    step "building promtool (prometheus $promtool_version = $prom_release)"
    t=$SECONDS
    pv=github.com/prometheus/common/version
    ldflags="-s -w -X $pv.Version=$prom_release -X $pv.Branch=module -X $pv.BuildUser=cronctl"
    "$GO" build -trimpath -ldflags "$ldflags" -o "$tmp_out/promtool" github.com/prometheus/prometheus/cmd/promtool
    step "promtool built in $(( SECONDS - t ))s"
    "$tmp_out/promtool" --version 2>&1 | head -1 || true
    mv -f "$tmp_out/promtool" "$bin_dir/"
    echo "$promtool_stamp" > "$bin_dir/.stamp-promtool"
fi

step "done: $bin_dir"
ls -l "$bin_dir"
}

main "$@"; exit $?  # on one line: bash never reads past it, even if the file changes
