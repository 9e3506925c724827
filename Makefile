# SPDX-License-Identifier: MIT
# The README's two commands: `make run` and `make test`.  CMake does the build.
BUILD ?= build
BENCH_BUILD ?= build-bench
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
# Debian's python3 (installed by the deps step), not a user's shim.
PYTHON ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
# CMake's own makefiles run under this one: keep their output quiet.
MAKEFLAGS += --no-print-directory

.PHONY: all run test build configure bench fuzz install clean docs

all: build

configure:
	@scripts/install-deps.sh build
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# The main job: build what it shows (not the tests), show what the library
# does, then run a real program (Python on a workload of its own) with
# libslub as its malloc.  It installs only the compilers and python3.
run:
	@scripts/install-deps.sh run
	@$(MAKE) configure
	cmake --build $(BUILD) -j$(JOBS) --target slub-demo slub-example-rcu slubrun slub_malloc slabinfo
	-cmake --build $(BUILD) -j$(JOBS) --target slubfs 2>/dev/null
	$(BUILD)/tools/slub-demo
	@echo
	$(BUILD)/tools/slub-example-rcu
	@echo
	@echo "== a real program on libslub: slubrun --stats -- $(PYTHON) tests/programs/workload.py"
	$(BUILD)/tools/slubrun --stats -- $(PYTHON) tests/programs/workload.py
	@echo
	@echo "== a program's caches, live: slabinfo -p and slubfs (scripts/demo-live.sh)"
	scripts/demo-live.sh $(BUILD) $(PYTHON)

# Every test, and the real programs they run under libslub.
test:
	@scripts/install-deps.sh test
	@$(MAKE) build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# Benchmarks build in their own (Release) tree, leaving $(BUILD) as it was;
# build-count is the SLUB_FAKE_RSEQ build that counts libslub's rseq paths
# under callgrind.  bench/suite.sh writes bench/results/<date>-<commit>/
# (ROUNDS=5 by default, QUICK=1 for a smoke run), then the merge replay;
# the older per-topic
# scripts (run*.sh) stay, to be run by hand.
bench:
	@scripts/install-deps.sh bench
	cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release -DSLUB_BUILD_TESTS=OFF $(CMAKE_FLAGS)
	cmake --build $(BENCH_BUILD) -j$(JOBS)
	cmake -S . -B build-count -DCMAKE_BUILD_TYPE=Release -DSLUB_BUILD_TESTS=OFF -DSLUB_FAKE_RSEQ=ON $(CMAKE_FLAGS)
	cmake --build build-count -j$(JOBS) --target bench_slab bench_micro_slab bench_ring_slab slub_malloc
	bench/suite.sh $(BENCH_BUILD) build-count
	$(BENCH_BUILD)/bench/merge_replay

# The fuzz targets of fuzz/ in their own tree: clang, libFuzzer, ASan and
# UBSan, with SLUB_STATS (its counters are attributes to write too).  Each
# runs FUZZ_SECONDS; one line per target (scripts/fuzz.sh).
fuzz:
	@scripts/install-deps.sh fuzz
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DSLUB_FUZZ=ON -DSLUB_STATS=ON \
	  -DSLUB_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_targets
	scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# docs/options.md's table, generated from src/base/options.h (test_options_doc checks it).
docs: configure
	cmake --build $(BUILD) --target gen_options
	python3 -c 'import re,subprocess,sys; t=subprocess.run(["$(BUILD)/tests/gen_options"],capture_output=True,text=True,check=True).stdout; p="docs/options.md"; d=open(p).read(); b=d.index("<!-- options: begin"); e=d.index("<!-- options: end -->")+len("<!-- options: end -->\n"); open(p,"w").write(d[:b]+t+d[e:])'

install: build
	cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

clean:
	rm -rf $(BUILD) build-*

# The soak (issue 34): SOAK_SECONDS (default 7200) over five modes (rseq,
# cmpxchg16b, sheaves, unqueued, FZPU), in its own build (RelWithDebInfo:
# optimized, with symbols for a failure's stacks).  SOAK_SECONDS=60 is CI's.
SOAK_BUILD ?= build-soak
SOAK_SECONDS ?= 7200
.PHONY: soak
soak:
	@scripts/install-deps.sh build
	cmake -S . -B $(SOAK_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUB_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(SOAK_BUILD) -j$(JOBS) --target slub_soak slub_soak_malloc slub_malloc slabinfo
	SOAK_SECONDS=$(SOAK_SECONDS) tests/soak/run.sh $(SOAK_BUILD)
