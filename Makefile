# perfscope: the shim (preload/), the symbolizer (symbolize/), the report (report/).
# `make` builds everything into build/; `make test`, `make bench`, `make demo` as the README says.

CC      ?= gcc
CXX     ?= g++
BUILD   := build
WARN    := -Wall -Wextra -Werror -Wno-format-truncation
CFLAGS  ?= -O2 -g
override CFLAGS += -std=gnu11 $(WARN) -fno-omit-frame-pointer -Iinclude -Iformat -D_GNU_SOURCE
# -Wno-format-truncation: paths are cut at PATH_MAX on purpose; a cut path fails to open and is logged.
# pkg-config is asked only when a recipe runs, after `deps` has installed what is missing.
PKG      = $(shell pkg-config --cflags $(1))
PKGLIBS  = $(shell pkg-config --libs $(1))

# The layers, bottom up (docs/architecture.md): format/ (the run folder's contract and its
# readers), preload/ (the shim, which writes it), symbolize/ and report/ (which read it).
# The shim compiles from format/ only what it needs: the record layout (a header) and the
# machine check it shares with the matrix runner, and the reading of a procs.jsonl line.
FORMAT_SRC   := $(sort $(wildcard format/*.c))
SHIM_FORMAT_SRC := format/machine.c format/procline.c
PRELOAD_SRC  := $(sort $(wildcard preload/*.c preload/counters/*.c)) $(SHIM_FORMAT_SRC)
SYMLIB_SRC   := $(sort $(filter-out symbolize/main.c,$(wildcard symbolize/*.c))) $(FORMAT_SRC)
REPORT_SRC   := $(sort $(wildcard report/*.c report/*/*.c))
PRELOAD_HDR  := $(wildcard preload/*.h preload/counters/*.h include/*.h format/*.h) Makefile
SYM_HDR      := $(wildcard symbolize/*.h include/*.h format/*.h)
REPORT_HDR   := $(wildcard report/*.h report/*/*.h)

SHIM     := $(BUILD)/libperfscope.so
SYMLIB   := $(BUILD)/libperfscope-symbolize.a
TOOLS    := $(if $(wildcard symbolize/main.c),$(BUILD)/perfscope-symbolize) \
            $(if $(REPORT_SRC),$(BUILD)/perfscope-report) \
            $(if $(wildcard perfscope/main.c),$(BUILD)/perfscope)
EXAMPLES := $(if $(wildcard examples/toy_engine.c),$(BUILD)/toy-engine)

.PHONY: all deps test test-asan bench demo clean fuzz tools
all: $(SHIM) $(TOOLS) $(EXAMPLES)

deps:
	@scripts/deps.sh

$(BUILD)/.deps-ok: scripts/deps.sh
	@mkdir -p $(BUILD)
	@scripts/deps.sh
	@touch $@

# The shim: position independent, initial-exec TLS only (the handler must never reach
# __tls_get_addr, which may allocate).
$(SHIM): $(PRELOAD_SRC) $(PRELOAD_HDR) | $(BUILD)/.deps-ok
	$(CC) $(CFLAGS) -fPIC -shared -pthread -ftls-model=initial-exec -fvisibility=hidden \
	  $(call PKG,libunwind libcjson zlib) -Ipreload -o $@ $(PRELOAD_SRC) \
	  $(call PKGLIBS,libunwind libcjson zlib) -ldl -lrt -Wl,-z,defs

$(BUILD)/obj/%.o: %.c $(SYM_HDR) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(call PKG,libdw libcjson zlib) -c -o $@ $<

# Each layer sees only the headers of the layers below it: format/ sees itself (CFLAGS), the
# symbolizer format/ and symbolize/, the report all three and its own.
$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard symbolize/*.c)): override CFLAGS += -Isymbolize

# The report's objects depend on its own headers too (a changed struct must rebuild its users).
# They name a header of another report/ folder by its folder ("run/run.h"), those of their own
# folder and the shared helpers (report/util/) by their bare names, as they do format/'s.
$(patsubst %.c,$(BUILD)/obj/%.o,$(REPORT_SRC)): $(REPORT_HDR)
$(patsubst %.c,$(BUILD)/obj/%.o,$(REPORT_SRC)): override CFLAGS += -Isymbolize -Ireport -Ireport/util

$(SYMLIB): $(patsubst %.c,$(BUILD)/obj/%.o,$(SYMLIB_SRC))
	@rm -f $@
	ar rcs $@ $^

TOOL_LIBS = $(call PKGLIBS,libdw libcjson zlib) -lelf -lm -lstdc++

$(BUILD)/perfscope-symbolize: $(BUILD)/obj/symbolize/main.o $(SYMLIB)
	$(CC) $(CFLAGS) -o $@ $^ $(TOOL_LIBS)

$(BUILD)/perfscope-report: $(patsubst %.c,$(BUILD)/obj/%.o,$(REPORT_SRC)) $(SYMLIB)
	$(CC) $(CFLAGS) -o $@ $^ $(TOOL_LIBS)

# The front door (perfscope/main.c): the report's objects without its main, and the symbolizer.
REPORT_LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out report/main.c,$(REPORT_SRC)))
$(BUILD)/obj/perfscope/main.o: $(REPORT_HDR)
$(BUILD)/obj/perfscope/main.o: override CFLAGS += -Isymbolize -Ireport -Ireport/util

$(BUILD)/perfscope: $(BUILD)/obj/perfscope/main.o $(REPORT_LIB_OBJ) $(SYMLIB)
	$(CC) $(CFLAGS) -o $@ $^ $(TOOL_LIBS)

$(BUILD)/toy-engine: examples/toy_engine.c include/perfscope.h | $(BUILD)/.deps-ok
	$(CC) $(CFLAGS) -pthread -o $@ $< -lm

test: all
	@tests/run.sh

# The readers and tools under AddressSanitizer and UBSan, against the tests named *tools*.
test-asan: all
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" tools
	@PERFSCOPE_TOOLS=build-asan tests/run.sh tools

tools: $(TOOLS)

bench: all
	@bench/run.sh

demo: all
	@examples/demo.sh

clean:
	rm -rf $(BUILD) build-asan

# ---- fuzz (format/ readers) ----------------------------------
# `make fuzz`: libFuzzer (clang) over the sample file, maps, phases and perf map readers, each for
# FUZZ_SECONDS (default 20), seeded from tests/fuzz/corpus/<reader>; new inputs go to
# $(BUILD)/fuzz/corpus-<reader> (never into the repository), crashes to $(BUILD)/fuzz/.
FUZZ_SECONDS ?= 20
FUZZ_CC      ?= clang
FUZZ_READERS := samples maps phases perfmap
FUZZ_SRC     := format/samples.c format/maps.c format/phases.c format/jsonl.c \
                format/textfile.c format/perfmap.c format/hmap.c
FUZZ_BINS    := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_READERS))

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_input.h $(FUZZ_SRC) $(SYM_HDR) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs clang: apt-get install -y clang"; exit 1; }
	$(FUZZ_CC) -std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=all $(call PKG,libcjson) -Iformat -Itests/fuzz -o $@ $< $(FUZZ_SRC) \
	  $(call PKGLIBS,libcjson) -lm

fuzz: $(FUZZ_BINS)
	@for r in $(FUZZ_READERS); do \
	  mkdir -p $(BUILD)/fuzz/corpus-$$r; \
	  echo "fuzz: $$r reader for $(FUZZ_SECONDS) s"; \
	  $(BUILD)/fuzz/fuzz_$$r -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/crash-$$r- \
	    $(BUILD)/fuzz/corpus-$$r tests/fuzz/corpus/$$r 2>$(BUILD)/fuzz/$$r.log || \
	    { tail -n 40 $(BUILD)/fuzz/$$r.log; echo "fuzz: the $$r reader failed (input in $(BUILD)/fuzz/crash-$$r-*)"; exit 1; }; \
	  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" $(BUILD)/fuzz/$$r.log | sed "s/^/fuzz: $$r: /"; \
	done
