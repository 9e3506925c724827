# The README's two commands: `make run` and `make test`.  CMake does the build.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)

.PHONY: all run test build deps bench install clean

all: build

deps:
	@scripts/install-deps.sh test

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# The main job: build, then show what the library does.
run: build
	./$(BUILD)/tools/slub-demo

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

bench:
	@scripts/install-deps.sh bench
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)
	bench/run.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

clean:
	rm -rf $(BUILD) build-*
