#!/usr/bin/env bash
# Runs controller-runtime's own test suites (at the version crcache's go.mod requires, from the
# Go module cache) against crcache, in a copy of that module where every cache the tests build
# is made by crcache.New instead of cache.New, and where a manager's default cache
# (cluster.Options.NewCache) is crcache.New: the cache suite itself (pkg/cache), the
# read-your-writes client over a cache (pkg/client), sources, controllers, builders,
# clusters and managers. Nothing of controller-runtime is kept in this repository; the copy
# lives in a temporary directory.
#
# Usage: KINDEX_KUBE_APISERVER=... KINDEX_ETCD=... crcache/conformance/run.sh
# (`make test-crcache-conformance` sets both to the test control plane's binaries.)
set -euo pipefail

GO=${GO:-go}
: "${KINDEX_KUBE_APISERVER:?path of the kube-apiserver binary}"
: "${KINDEX_ETCD:?path of the etcd binary}"
here=$(cd "$(dirname "$0")" && pwd)
crcache=$(dirname "$here")
root=$(dirname "$crcache")

ver=$(cd "$crcache" && $GO list -m -f '{{.Version}}' sigs.k8s.io/controller-runtime)
src=$(cd "$crcache" && $GO mod download -json "sigs.k8s.io/controller-runtime@$ver" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src/pkg/cache" ] || { echo "controller-runtime $ver: no module directory" >&2; exit 1; }

work=$(mktemp -d)
assets=$work/.assets

# reap stops the control planes a suite left running, with their data and certificate
# directories: some of controller-runtime's specs (pkg/internal/controller) start an
# environment of their own into the suite's global one, which AfterSuite then stops alone.
# Processes are found by their executable's path, which only this run's use.
reap() {
	local pids=() dirs=() pid arg i
	local -a args
	for pid in /proc/[0-9]*; do
		# stderr first: a process that ended since the glob has no cmdline to open.
		mapfile -d '' args 2>/dev/null <"$pid/cmdline" || continue
		case "${args[0]:-}" in "$assets"/kube-apiserver | "$assets"/etcd) ;; *) continue ;; esac
		pids+=("${pid#/proc/}")
		for arg in "${args[@]}"; do
			case "$arg" in --data-dir=/tmp/k8s_test_framework_* | --cert-dir=/tmp/k8s_test_framework_*) dirs+=("${arg#*=}") ;; esac
		done
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	echo ">> stopping ${#pids[@]} control plane processes left running"
	kill "${pids[@]}" 2>/dev/null || true
	for i in $(seq 50); do
		running "${pids[@]}" || break
		sleep 0.2
	done
	kill -9 "${pids[@]}" 2>/dev/null || true
	rm -rf "${dirs[@]}"
}

# running says whether one of the processes is still running (not gone, not a zombie).
running() {
	local pid state
	for pid in "$@"; do
		state=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$pid/stat" 2>/dev/null) || continue
		[ -n "$state" ] && [ "$state" != Z ] && return 0
	done
	return 1
}
trap 'reap; chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$src"/. "$work"/
chmod -R u+w "$work"

# patch makes every cache.New( and (cache.New, of file crcache.New and imports crcache; it
# fails unless it replaced at least least of them and left none.
patch() {
	local file=$1 least=$2 uses left
	sed -i \
		-e 's/\([^A-Za-z0-9_.]\)cache\.New(/\1crcache.New(/g' \
		-e 's/(cache\.New,/(crcache.New,/g' \
		-e 's/\(options\.NewCache = \)cache\.New$/\1crcache.New/' \
		-e '0,/^import (/s//import (\n\tcrcache "github.com\/kindex\/kindex\/crcache"/' \
		"$file"
	uses=$(grep -c 'crcache\.New' "$file" || true)
	left=$(grep -cE '(^|[^A-Za-z0-9_.])cache\.New([(,]|$)' "$file" || true)
	if [ "$uses" -lt "$least" ] || [ "$left" -ne 0 ]; then
		echo "$file of controller-runtime $ver: $uses constructors replaced, $left left; the script needs updating" >&2
		exit 1
	fi
}
patch "$work/pkg/cache/cache_test.go" 15
patch "$work/pkg/client/consistency_envtest_test.go" 2
patch "$work/pkg/source/source_suite_test.go" 1
patch "$work/pkg/internal/controller/controller_test.go" 5
# The default cache of every cluster and manager.
patch "$work/pkg/cluster/cluster.go" 1

cat >>"$work/go.mod" <<MOD

require github.com/kindex/kindex/crcache v0.0.0
replace github.com/kindex/kindex/crcache => $crcache
replace github.com/kindex/kindex => $root
MOD

mkdir -p "$assets"
ln -s "$KINDEX_KUBE_APISERVER" "$assets/kube-apiserver"
ln -s "$KINDEX_ETCD" "$assets/etcd"

cd "$work"
export GOFLAGS=-mod=mod
$GO mod tidy
# suite runs one package's tests with -race; extra arguments select them. It requires every
# Ginkgo spec selected to pass, and at least min of them: fewer means the suite changed.
suite() {
	local pkg=$1 min=$2 log n total ran
	shift 2
	log=$work/specs-$(basename "$pkg").log
	echo ">> controller-runtime $ver $pkg specs against crcache"
	if ! KUBEBUILDER_ASSETS=$assets $GO test -race -count=1 -timeout 20m "$pkg" -v -ginkgo.no-color "$@" >"$log" 2>&1; then
		tail -n 200 "$log"
		exit 1
	fi
	reap
	ran=$(sed -n 's/^Ran \([0-9]*\) of \([0-9]*\) Specs.*/\1 \2/p' "$log")
	read -r n total <<<"${ran:-0 0}"
	grep -m1 '^SUCCESS!' "$log" || true
	if [ "$n" -lt "$min" ] || ! grep -q '^SUCCESS!' "$log"; then
		tail -n 50 "$log"
		echo "$pkg: ran $n of $total specs (at least $min expected)" >&2
		exit 1
	fi
}

# Every spec and test of pkg/cache but one: TestReaderWaitsForCacheSync hands the cache a
# fake informer through Options.NewInformer, which crcache does not use (its informers are
# kindex's), and an unreachable server, so that crcache's reads fail at once on discovery
# where the fake informer would make them wait; controller-runtime's own cache fails the
# same way on an unreachable server when its REST mapper has to ask.
suite ./pkg/cache/ 250 -skip '^TestReaderWaitsForCacheSync$'
# The read-your-writes client (client.CacheOptions.EnableReadYourWritesConsistency) over
# crcache: writes of each kind, then reads that must see them.
suite ./pkg/client/ 10 -run '^TestClient$' -ginkgo.focus ConsistentClient
# Kind sources, controllers, builders and clusters on crcache.
suite ./pkg/source/ 15
# The controller specs that build a cache (Start and Warmup, all made by crcache.New). The
# package's other specs read no cache and race with themselves under load, two of them seen
# failing: a fake reconciler signals its request before returning, and the spec then reads the
# queue's rate-limited additions at once (Expect, not Eventually); and a spec that resets a
# global reconcile-time histogram finds a sample left by the previous spec's controller.
# One of the specs kept races with itself too (seen once in about forty runs): "should not
# error when controller Warmup context is cancelled during Sources WaitForSync" wraps the
# cache in one whose GetInformer blocks until its context ends and then returns an error, and
# cancels that context at once; the Kind source's WaitForSync then selects between that error
# and the context's end, both ready, and returns the error when Go's select picks it. No call
# reaches crcache after its construction. So a spec may pass on a second attempt (Ginkgo
# prints it as FLAKEY, and so does this script), as for the managers below.
suite ./pkg/internal/controller/ 30 -ginkgo.focus 'controller (Start|Warmup) ' -ginkgo.flake-attempts=2
grep -h 'FLAKEY TEST' "$work"/specs-controller.log || true
suite ./pkg/builder/ 60
suite ./pkg/cluster/ 12
# Managers whose cache is crcache, every spec: among them four that stop a manager, close
# the idle connections of the shared HTTP transport once, and then require that no
# goroutine is left. They failed about one run in three under load while crcache started
# discovery with the cache: requests cancelled at the stop left their HTTP/2 streams open a
# moment longer, so their connection was not idle when closed. Discovery now starts with
# the first informer, and a cache without informers makes no request (TestNoRequestWithoutAnInformer).
# One of them still failed once in about twenty runs: "the deprecated event broadcaster is
# used & events are emitted", where the cache makes no request at all and the connection left
# open is the event sink's; controller-runtime has seen these specs flake in its own CI. A spec of
# this suite may therefore pass on a second attempt (Ginkgo prints it as FLAKEY, and so does
# this script); one that fails twice fails the run. One spec is left out: "with defaults
# should not return runnables context.Canceled errors" reads the log lines it collected
# without their lock when leader election is off, while the manager's goroutines may still
# log after Start returns; the race detector then fails the whole suite (seen once, with
# every spec passed). It tests what the manager logs, not what a cache does.
suite ./pkg/manager/ 106 -ginkgo.flake-attempts=2 -ginkgo.skip 'with defaults should not return runnables context.Canceled errors'
grep -h 'FLAKEY TEST' "$work"/specs-manager.log || true
