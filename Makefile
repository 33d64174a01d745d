# The two set-up commands of README.md. Both install missing Debian packages, configure and build.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: deps build demo test clean

deps:
	./scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_WERROR=ON
	cmake --build $(BUILD) -j $(JOBS)

# Main job: the bundled default model (squeezenet1_1) on the reference executor, then compiled
# for Vulkan and run on the first Vulkan device (lavapipe when there is no GPU); both print the
# top-5 classes and the max error against the golden output.
demo: build
	$(BUILD)/bin/kiln run models/squeezenet1_1.onnx --device cpu-ref \
	  --input input=models/squeezenet1_1.in.input.npy \
	  --golden logits=models/squeezenet1_1.out.logits.npy \
	  --output-dir $(BUILD)/demo --top 5
	$(BUILD)/bin/kiln compile models/squeezenet1_1.onnx -o $(BUILD)/demo/squeezenet1_1.kiln --target vulkan
	$(BUILD)/bin/kiln run $(BUILD)/demo/squeezenet1_1.kiln --device vulkan \
	  --input input=models/squeezenet1_1.in.input.npy \
	  --golden logits=models/squeezenet1_1.out.logits.npy --top 5

# Every test: unit tests, lit tests, ONNX conformance against the expected-pass lists.
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)

# Fuzzing (fuzz/fuzz.sh): libFuzzer targets built with clang-14 in build-fuzz, each run for
# FUZZ_SECONDS; fails on any crash, sanitizer report or timeout (saved in tests/fuzz-regressions/).
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	./scripts/install-deps.sh clang-14 libclang-rt-14-dev
	FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD=$(BUILD) JOBS=$(JOBS) ./fuzz/fuzz.sh
