# The set-up commands of README.md (demo, test, check). Each installs missing Debian packages,
# configures and builds.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: deps build demo test check clean

deps:
	./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_WERROR=ON
	cmake --build $(BUILD) -j $(JOBS)

# Main job: the bundled default model (squeezenet1_1) on the reference executor, then compiled
# for the native CPU backend (C built by the system compiler into the artifact) and run on the
# cpu device, then for Vulkan on the first Vulkan device (lavapipe when there is no GPU). Each
# prints the top-5 classes, the max error against the golden output and its time per call
# (median of 5 calls after the first).
DEMO_IO = --input input=models/squeezenet1_1.in.input.npy \
	  --golden logits=models/squeezenet1_1.out.logits.npy --top 5 --time 5
demo: build
	$(BUILD)/bin/kiln run models/squeezenet1_1.onnx --device cpu-ref $(DEMO_IO) \
	  --output-dir $(BUILD)/demo
	$(BUILD)/bin/kiln compile models/squeezenet1_1.onnx -o $(BUILD)/demo/squeezenet1_1.cpu.kiln --target cpu
	$(BUILD)/bin/kiln run $(BUILD)/demo/squeezenet1_1.cpu.kiln --device cpu $(DEMO_IO)
	$(BUILD)/bin/kiln compile models/squeezenet1_1.onnx -o $(BUILD)/demo/squeezenet1_1.kiln --target vulkan
	$(BUILD)/bin/kiln run $(BUILD)/demo/squeezenet1_1.kiln --device vulkan $(DEMO_IO)

# make test: the normal suite (unit, lit, conformance against the expected-pass lists, the
# Python package, the install) in $(BUILD). make check: that, then the concurrency tests under
# TSan, then the whole suite again under ASan + UBSan with leak detection (its Vulkan suites use
# core validation: the synchronization-validation layer leaks from a library it has unloaded by
# exit, which an LSan suppression by library cannot match). .ci/run runs make check.
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

check: test
	$(MAKE) test-tsan
	$(MAKE) test-asan

# Sanitizer builds (RelWithDebInfo at -O2 -g1). test-asan: every ctest
# test built with -fsanitize=address,undefined in build-asan, leaks included; third-party leaks
# are suppressed by library in tests/sanitizers/lsan.supp. test-tsan: the concurrency tests'
# null-driver, cpu-ref and cpu thread-pool cases built with -fsanitize=thread in build-tsan.
SAN_CONFIG = -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1"
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:check_initialization_order=1:detect_stack_use_after_return=1 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
.PHONY: test-asan test-tsan
test-asan: deps
	cmake -S . -B build-asan $(SAN_CONFIG) -DKILN_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)
	$(ASAN_ENV) ctest --test-dir build-asan --output-on-failure -j $(JOBS)

test-tsan: deps
	cmake -S . -B build-tsan $(SAN_CONFIG) -DKILN_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS) --target kiln_concurrency_tests
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/bin/kiln_concurrency_tests \
	  --gtest_filter='ConcurrencyNull.*:ConcurrencyCpuRef.*:ConcurrencyCpuPool.*'

clean:
	rm -rf $(BUILD)

# Fuzzing (fuzz/fuzz.sh): libFuzzer targets built with clang-14 in build-fuzz, each run for
# FUZZ_SECONDS; fails on any crash, sanitizer report or timeout (saved in tests/fuzz-regressions/).
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	./scripts/install-deps.sh clang-14 libclang-rt-14-dev
	FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD=$(BUILD) JOBS=$(JOBS) ./fuzz/fuzz.sh
