# The README's commands. `make test` works on a brand-new Debian 12 machine:
# it installs what it needs (toolchains/install-deps.sh), configures, builds
# and runs every test that is not labelled soak or bench.
JOBS ?= $(shell nproc)

.PHONY: all deps configure build test soak bench format clean

all: build

deps:
	bash toolchains/install-deps.sh

configure: deps
	cmake --preset default

build: configure
	cmake --build --preset default -j $(JOBS)

test: build
	ctest --preset default -j $(JOBS)

soak: build
	ctest --preset soak

bench: build
	ctest --preset bench

format:
	git ls-files '*.h' '*.cc' '*.c' | xargs clang-format -i

clean:
	rm -rf build
