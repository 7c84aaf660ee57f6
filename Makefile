# The two entry points the README documents:
#   make demo  -- set up, build, run the main job
#   make test  -- set up, build, run every test (ctest)
BUILD ?= build
MLIR_DIR ?= /usr/lib/llvm-19/lib/cmake/mlir
JOBS ?= 2

.PHONY: setup configure build demo test test-asan clean

setup:
	bash tools/setup-debian.sh

$(BUILD)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD) -DMLIR_DIR=$(MLIR_DIR) -DCMAKE_BUILD_TYPE=Release

configure: setup $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD) -j$(JOBS)

demo: build
	bash tools/demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# Every test but the bench smoke run and the mutation sample (release-only:
# minutes each under ASan; the checker itself runs under ASan in HazardTest)
# with AddressSanitizer + UndefinedBehaviorSanitizer (CMakePresets.json).
test-asan: setup
	cmake --preset asan
	cmake --build build-asan -j$(JOBS)
	ctest --preset asan -j$(JOBS) -E '^(bench-smoke|seam-mutate-sample)$$'

clean:
	rm -rf $(BUILD)
