# perfscope: the shim (preload/), the symbolizer (symbolize/), the report (report/).
# `make` builds everything into build/; `make test`, `make bench`, `make demo` as the README says.

CC      ?= gcc
CXX     ?= g++
BUILD   := build
WARN    := -Wall -Wextra -Werror -Wno-format-truncation
CFLAGS  ?= -O2 -g
override CFLAGS += -std=gnu11 $(WARN) -fno-omit-frame-pointer -Iinclude -D_GNU_SOURCE
# -Wno-format-truncation: paths are cut at PATH_MAX on purpose; a cut path fails to open and is logged.
# pkg-config is asked only when a recipe runs, after `deps` has installed what is missing.
PKG      = $(shell pkg-config --cflags $(1))
PKGLIBS  = $(shell pkg-config --libs $(1))

PRELOAD_SRC  := $(sort $(wildcard preload/*.c preload/counters/*.c))
SYMLIB_SRC   := $(sort $(filter-out symbolize/main.c,$(wildcard symbolize/*.c)))
REPORT_SRC   := $(sort $(wildcard report/*.c))
PRELOAD_HDR  := $(wildcard preload/*.h preload/counters/*.h include/*.h) Makefile
SYM_HDR      := $(wildcard symbolize/*.h include/*.h)

SHIM     := $(BUILD)/libperfscope.so
SYMLIB   := $(BUILD)/libperfscope-symbolize.a
TOOLS    := $(if $(wildcard symbolize/main.c),$(BUILD)/perfscope-symbolize) \
            $(if $(REPORT_SRC),$(BUILD)/perfscope-report)
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
	$(CC) $(CFLAGS) $(call PKG,libdw libcjson zlib) -Isymbolize -c -o $@ $<

$(SYMLIB): $(patsubst %.c,$(BUILD)/obj/%.o,$(SYMLIB_SRC))
	@rm -f $@
	ar rcs $@ $^

TOOL_LIBS = $(call PKGLIBS,libdw libcjson zlib) -lelf -lm -lstdc++

$(BUILD)/perfscope-symbolize: $(BUILD)/obj/symbolize/main.o $(SYMLIB)
	$(CC) $(CFLAGS) -o $@ $^ $(TOOL_LIBS)

$(BUILD)/perfscope-report: $(patsubst %.c,$(BUILD)/obj/%.o,$(REPORT_SRC)) $(SYMLIB)
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
