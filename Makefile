# kindex: `make test` builds the test control plane if it is missing, then vets and runs every
# test (integration tests included) with the race detector. `make demo` runs the quickstart.

SHELL := /bin/bash
GO ?= go

KUBE_VERSION := v1.37.1
ETCD_VERSION := v3.6.16
CACHE_HOME := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)
export KINDEX_CONTROLPLANE_DIR ?= $(CACHE_HOME)/kindex/controlplane
KUBE_APISERVER := $(KINDEX_CONTROLPLANE_DIR)/kube-apiserver-$(KUBE_VERSION)/kube-apiserver
ETCD := $(KINDEX_CONTROLPLANE_DIR)/etcd-$(ETCD_VERSION)/etcd

TEST_TIMEOUT ?= 40m
# Iterations, not a duration: a duration makes `go test -fuzz` fail with "context deadline
# exceeded" when a worker is busy at the deadline on a loaded machine.
FUZZTIME ?= 20000x
FUZZ_TARGETS ?=

.PHONY: all controlplane test test-crcache test-crcache-conformance vet fuzz bench fmt demo clean-controlplane

all: test

controlplane: $(KUBE_APISERVER) $(ETCD)

# Built from source through the Go module proxy, in build modules of their own, so that the
# library's go.mod never requires k8s.io/kubernetes. Cached outside the clone, keyed by version.
$(KUBE_APISERVER):
	@echo ">> building kube-apiserver $(KUBE_VERSION) (a cold build takes about 8 minutes on 2 cores)"
	@mkdir -p $(dir $@)
	cd controlplane && $(GO) build -o $@.tmp k8s.io/kubernetes/cmd/kube-apiserver && mv $@.tmp $@

$(ETCD):
	@echo ">> building etcd $(ETCD_VERSION)"
	@mkdir -p $(dir $@)
	cd controlplane/etcd && $(GO) build -o $@.tmp go.etcd.io/etcd/server/v3 && mv $@.tmp $@

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

test: controlplane vet
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	@$(MAKE) --no-print-directory test-crcache
	@$(MAKE) --no-print-directory test-crcache-conformance
	@$(MAKE) --no-print-directory fuzz

# crcache (the controller-runtime cache) is a module of its own, so that the library's module
# never requires controller-runtime; `./...` above does not reach it.
test-crcache: controlplane
	cd crcache && $(GO) vet ./... && $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

# controller-runtime's own cache specs (its pkg/cache suite, at the version crcache requires,
# from the module cache, in a temporary copy) with every cache they build made by crcache.New.
test-crcache-conformance: controlplane
	KINDEX_KUBE_APISERVER=$(KUBE_APISERVER) KINDEX_ETCD=$(ETCD) GO=$(GO) crcache/conformance/run.sh

# A short bounded run of every fuzz target, one at a time (go test -fuzz takes one target),
# each from its own module's directory (crcache is a module of its own).
fuzz:
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -r -n1 dirname | sort -u); do \
	  mod=.; pkg=$$dir; \
	  case $$dir in ./crcache) mod=crcache; pkg=.;; ./crcache/*) mod=crcache; pkg=./$${dir#./crcache/};; esac; \
	  for f in $$(grep -h '^func Fuzz' $$dir/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo ">> fuzz $$dir $$f ($(FUZZTIME))"; \
	    (cd $$mod && $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg); \
	  done; \
	done

bench: controlplane
	$(GO) test -run '^$$' -bench . -benchmem ./bench/...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean-controlplane:
	rm -rf $(KINDEX_CONTROLPLANE_DIR)

# The quickstart (examples/quickstart) against a control plane it starts on loopback and seeds
# with the demo CRD and 300 objects; everything stops at the end and on Ctrl-C. Add
# DEMO_FLAGS=-hold to keep the control plane running afterwards for the other examples and
# kubectl-kquery. Built, then run, rather than `go run`, which exits 1 when interrupted: the
# program's own exit status (0 after Ctrl-C) is what make sees.
DEMO_BIN := $(CACHE_HOME)/kindex/bin/quickstart
demo: controlplane
	@mkdir -p $(dir $(DEMO_BIN))
	$(GO) build -o $(DEMO_BIN) ./examples/quickstart
	@$(DEMO_BIN) -local $(DEMO_FLAGS)

# The same against the cluster of the current kubeconfig (DEMO_FLAGS="-context NAME" or
# "-kubeconfig PATH" to pick another): it seeds the demo CRD and objects there first and
# deletes them at the end (add -keep to keep them).
.PHONY: demo-kubeconfig
demo-kubeconfig:
	$(GO) run ./examples/quickstart -seed $(DEMO_FLAGS)

# The comparison harness (bench/harness): one control plane, N seeded pods (BENCH_N, default
# 20000) and N/10 custom resources, every subject measured BENCH_RUNS times in fresh child
# processes (restarts from a snapshot in two: one writes it, one restarts; the restart after
# 410 restarts kube-apiserver once per run). Prints the table and writes
# bench/results/compare-<N>.{json,md} (not committed).
.PHONY: bench-compare bench-scale
bench-compare: controlplane
	$(GO) run ./bench/cmd/compare -n $(or $(BENCH_N),20000) -runs $(or $(BENCH_RUNS),3) $(BENCH_FLAGS)

# One process, 150,000 Pods: the compact mode with five JSONPath indexes against the
# apiserver's JSON LIST of the same objects (sync time, heap held, peak RSS).
bench-scale: controlplane
	$(GO) run ./bench/cmd/compare -n $(or $(BENCH_N),150000) -m -1 -runs $(or $(BENCH_RUNS),2) -subjects apiserver-list-json,kindex-compact,kindex-compact-indexed $(BENCH_FLAGS)
