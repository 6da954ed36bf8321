#!/usr/bin/env bash
# Runs controller-runtime's own cache specs (pkg/cache, at the version crcache's go.mod
# requires, from the Go module cache) against crcache: a copy of that module whose
# cache_test.go builds every cache under test with crcache.New instead of cache.New. Nothing
# of controller-runtime is kept in this repository; the copy lives in a temporary directory.
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
# The least number of specs the suite must run: fewer means the suite changed under us.
min_specs=${CONFORMANCE_MIN_SPECS:-250}

ver=$(cd "$crcache" && $GO list -m -f '{{.Version}}' sigs.k8s.io/controller-runtime)
src=$(cd "$crcache" && $GO mod download -json "sigs.k8s.io/controller-runtime@$ver" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src/pkg/cache" ] || { echo "controller-runtime $ver: no module directory" >&2; exit 1; }

work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$src"/. "$work"/
chmod -R u+w "$work"

# Every cache the specs build is crcache's: controller-runtime's cache suite (pkg/cache) and
# the specs of its read-your-writes client (pkg/client, ConsistentClient), which reads through
# a cache.
patch() {
	local spec=$1 least=$2 uses left
	sed -i \
		-e 's/\([^A-Za-z0-9_.]\)cache\.New(/\1crcache.New(/g' \
		-e 's/(cache\.New,/(crcache.New,/g' \
		-e '0,/^import (/s//import (\n\tcrcache "github.com\/kindex\/kindex\/crcache"/' \
		"$spec"
	uses=$(grep -c 'crcache\.New' "$spec" || true)
	left=$(grep -cE '(^|[^A-Za-z0-9_.])cache\.New[(,]' "$spec" || true)
	if [ "$uses" -lt "$least" ] || [ "$left" -ne 0 ]; then
		echo "$spec of controller-runtime $ver: $uses constructors replaced, $left left; the script needs updating" >&2
		exit 1
	fi
}
patch "$work/pkg/cache/cache_test.go" 15
patch "$work/pkg/client/consistency_envtest_test.go" 2

cat >>"$work/go.mod" <<MOD

require github.com/kindex/kindex/crcache v0.0.0
replace github.com/kindex/kindex/crcache => $crcache
replace github.com/kindex/kindex => $root
MOD

assets=$work/.assets
mkdir -p "$assets"
ln -s "$KINDEX_KUBE_APISERVER" "$assets/kube-apiserver"
ln -s "$KINDEX_ETCD" "$assets/etcd"

cd "$work"
export GOFLAGS=-mod=mod
$GO mod tidy
# suite runs one package's tests with -race; extra arguments select them. It requires every
# Ginkgo spec selected to pass, and at least min of them.
suite() {
	local pkg=$1 min=$2 log n total ran
	shift 2
	log=$work/specs-$(basename "$pkg").log
	echo ">> controller-runtime $ver $pkg specs against crcache"
	if ! KUBEBUILDER_ASSETS=$assets $GO test -race -count=1 -timeout 20m "$pkg" -v -ginkgo.no-color "$@" >"$log" 2>&1; then
		tail -n 200 "$log"
		exit 1
	fi
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
suite ./pkg/cache/ "$min_specs" -skip '^TestReaderWaitsForCacheSync$'
# The read-your-writes client (client.CacheOptions.EnableReadYourWritesConsistency) over
# crcache: writes of each kind, then reads that must see them.
suite ./pkg/client/ 10 -run '^TestClient$' -ginkgo.focus ConsistentClient
