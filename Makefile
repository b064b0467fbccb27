# The README's commands. `make test` and `make demo` work on a brand-new
# Debian 12 machine: both install what they need (toolchains/install-deps.sh)
# and configure; `make test` builds everything and runs every test that is
# not labelled soak or bench, `make demo` builds only outbox-demo and what it
# runs (outbox-sink, outbox-pos-sim) and runs its story.
JOBS ?= $(shell nproc)
# Native tests wait on sockets, timers, child processes and fsync more than
# they compute, so `make test` runs twice as many as there are cores: on the
# 2-core CI machine its tests took 221 s with -j2 (CPU 122% of 200%) and
# 132 s with -j4 (173%). Tests never assert on wall time. Under qemu they
# compute (178% at -j2), and -j4 gained nothing (265 s, 275 s): the ARM
# test targets run one per core.
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))

.PHONY: all deps configure build test demo soak bench fuzz mutation format clean docs-help readme-help
.PHONY: sysroot-aarch64 static-deps-aarch64 build-aarch64 test-aarch64
.PHONY: sysroot-armhf static-deps-armhf build-armhf test-armhf

all: build

deps:
	bash toolchains/install-deps.sh

# The default preset builds MQTT and Kafka ON, not AUTO: a machine without
# libmosquitto-dev or librdkafka-dev fails here instead of running fewer
# tests, and the ctest Suites.EveryOptionalSuiteIsRegistered (tests/suites/)
# fails when a suite that needs a program (mosquitto, qemu, faketime) was
# left out.
configure: deps
	cmake --preset default

build: configure
	cmake --build --preset default -j $(JOBS)

test: build
	ctest --preset default -j $(TEST_JOBS)

# The demo (docs/demo.md): tills commit offline, the receiver comes back
# with faults, one till is SIGKILLed in its drain; ends with the table and
# exits non-zero if a sale was lost. Stores and logs: build/demo-out.
# DEMO_ARGS passes flags, e.g. DEMO_ARGS=--short (outbox-demo --help).
DEMO_ARGS ?=
demo: configure
	cmake --build --preset default -j $(JOBS) --target outbox-demo
	build/bin/outbox-demo --dir build/demo-out $(DEMO_ARGS)

soak: build
	ctest --preset soak

bench: build
	ctest --preset bench

# The libFuzzer targets (tests/fuzz/), FUZZ_SECONDS each (default 600), two
# at a time; `make test` runs them for 10 s each. Inputs found accumulate in
# build/fuzz/work/<target>/corpus; crashes land beside it in artifacts/.
# Final stats (cov, exec/s): build/Testing/Temporary/LastTest.log.
FUZZ_SECONDS ?= 600
fuzz: build
	OUTBOX_FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --test-dir build -L '^fuzz$$' \
	  -j $(JOBS) --output-on-failure --timeout $$(( $(FUZZ_SECONDS) + 300 ))

# The mutation campaign (tests/mutation/mutations.txt; docs/reliability.md):
# applies each listed one-line break to lib/, agent/ or platform/ alone,
# rebuilds, runs the tests (fuzz, soak and bench excluded, stopping at the
# first failure) and says which test caught it; fails if one survived. Not
# part of `make test` or CI: each mutation costs a rebuild. MUTATIONS names
# some (default: all), MUTATION_ARGS passes flags (run.py --help).
MUTATIONS ?=
MUTATION_ARGS ?=
mutation: build
	python3 tests/mutation/run.py --build-dir build --jobs $(TEST_JOBS) \
	  $(MUTATION_ARGS) $(MUTATIONS)

# Rewrites the command-line reference (docs/command-line.md) from each
# program's --help (the ctest Readme.CommandLineReferenceIsEachProgramsHelp
# checks it). readme-help is its old name.
docs-help readme-help: build
	python3 tests/usage/help_blocks.py update --doc docs/command-line.md --bin-dir build/bin

format:
	git ls-files '*.h' '*.cc' '*.c' | xargs clang-format -i

clean:
	rm -rf build

# Cross builds for ARM gateways; tests run under qemu-user. Each builds its
# sysroot once (toolchains/build-sysroot.sh: Debian arm .debs in
# /opt/edge-outbox/sysroot-<arch>, ~30 MiB download), then configures
# build/<arch>, builds and runs the same tests as `make test`. The aarch64
# preset links every executable fully static, which needs the HTTP-only
# libcurl and the cpp-httplib header of toolchains/build-static-deps.sh
# (/opt/edge-outbox/static-<arch>, ~5 MiB of Debian source, ~25 s to build).
sysroot-aarch64 sysroot-armhf: sysroot-%: deps
	bash toolchains/build-sysroot.sh $*

static-deps-aarch64 static-deps-armhf: static-deps-%: sysroot-%
	bash toolchains/build-static-deps.sh $*

build-aarch64: static-deps-aarch64

build-aarch64 build-armhf: build-%: sysroot-%
	cmake --preset $*
	cmake --build --preset $* -j $(JOBS)

test-aarch64 test-armhf: test-%: build-%
	ctest --preset $* -j $(JOBS)

# The ARM board's power cuts (tests/vm/arm_board.cmake) are driven by the
# native build's harness and disk.
test-aarch64: build
