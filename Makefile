# rtdiag: two commands do all set-up on a fresh machine.
#   make run   - install what is missing, build, run rtdiag's main job on a built-in example
#   make test  - install, build, run every test: normal build, ASan+UBSan build, fuzz corpora
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CTEST_ARGS ?= --output-on-failure

# dotnet build leaves build servers behind by default (MSBuild worker nodes,
# the MSBuild server, the Roslyn compiler server) that inherit the caller's
# stdout: a test that captures a build's output, or ctest reading a test's
# output, then waits for an EOF that comes only when the server idles out
# (a 25-minute CI hang). Builds here start none.
export MSBUILDDISABLENODEREUSE = 1
export DOTNET_CLI_USE_MSBUILD_SERVER = 0
export DOTNET_CLI_DO_NOT_USE_MSBUILD_SERVER = 1
export UseSharedCompilation = false
export DOTNET_CLI_TELEMETRY_OPTOUT = 1
export DOTNET_NOLOGO = 1

.PHONY: all deps build build-asan run test test-normal test-asan install bench clean

all: build

deps:
	@echo "== checking Debian packages"
	@bash scripts/install-deps.sh

build: deps
	@echo "== building rtdiag ($(BUILD))"
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@echo "== building rtdiag with ASan+UBSan, clang ($(ASAN_BUILD))"
	@CC=clang cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRTD_SANITIZE=ON -DRTD_FUZZ=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

run: build
	@bash scripts/run-example.sh $(BUILD)

test-normal: build
	@echo "== running the test suite ($(BUILD))"
	@bash scripts/test-half.sh "normal build" $(BUILD) $(CTEST_ARGS) -j $(JOBS)

test-asan: build-asan
	@echo "== running the test suite under ASan+UBSan ($(ASAN_BUILD))"
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  RTD_SANITIZED=1 bash scripts/test-half.sh "ASan+UBSan build" $(ASAN_BUILD) $(CTEST_ARGS) -j $(JOBS)

# Both halves run whatever the first gave (a failure of the normal build's
# tests says nothing about the sanitizers'); each one's result is printed
# again at the end, a line per half with ctest's counts and then ctest's
# own list of what failed, and the exit status is non-zero if either half
# failed to build or failed a test.
test:
	@rm -f $(BUILD)/test-half.summary $(ASAN_BUILD)/test-half.summary; rc=0; \
	$(MAKE) --no-print-directory test-normal || rc=1; \
	$(MAKE) --no-print-directory test-asan || rc=1; \
	echo "== results of both halves"; \
	for h in "normal build:$(BUILD)" "ASan+UBSan build:$(ASAN_BUILD)"; do \
	  d=$${h#*:}; \
	  if [ -f "$$d/test-half.summary" ]; then cat "$$d/test-half.summary"; \
	  else echo "$${h%%:*} ($$d): not run (its build failed, see above)"; fi; \
	done; \
	if [ $$rc = 0 ]; then echo "== all tests passed (normal and ASan+UBSan builds)"; \
	else echo "== FAILED: see the results above"; fi; \
	cat $(BUILD)/test-half.summary $(ASAN_BUILD)/test-half.summary 2>/dev/null | \
	  awk '/tests passed, [0-9]+ tests failed out of/ { for (i = 1; i <= NF; i++) { \
	    if ($$i == "failed") f += $$(i-2); if ($$i == "of") t += $$(i+1); if ($$i == "skipped,") s += $$(i-1) } } \
	    END { printf "tests: %d passed, %d failed, %d skipped\n", t - f - s, f, s }'; \
	exit $$rc

install: build
	cmake --install $(BUILD)

bench: build
	@bash bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
