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
# machine check it shares with the matrix runner (and the whole-file reader it uses), and the
# reading of a procs.jsonl line.
FORMAT_SRC   := $(sort $(wildcard format/*.c))
SHIM_FORMAT_SRC := format/machine.c format/procline.c format/textfile.c
PRELOAD_SRC  := $(sort $(wildcard preload/*.c preload/counters/*.c)) $(SHIM_FORMAT_SRC)
SYMLIB_SRC   := $(sort $(filter-out symbolize/main.c,$(wildcard symbolize/*.c))) $(FORMAT_SRC)
REPORT_SRC   := $(sort $(wildcard report/*.c report/*/*.c))
PRELOAD_HDR  := $(wildcard preload/*.h preload/counters/*.h include/*.h format/*.h) Makefile
SYM_HDR      := $(wildcard symbolize/*.h include/*.h format/*.h)
REPORT_HDR   := $(wildcard report/*.h report/*/*.h)

SHIM     := $(BUILD)/libperfscope.so
# The shim for container images (docs/containers.md): the same objects linked again with
# RPATH $ORIGIN (DT_RPATH, not RUNPATH: it must also reach the dlopen'd libunwind's own liblzma),
# its non-glibc libraries and libunwind copied beside it, and glibc-floor, the oldest glibc it
# needs.
CSHIM    := $(BUILD)/container/libperfscope.so
SYMLIB   := $(BUILD)/libperfscope-symbolize.a
TOOLS    := $(if $(wildcard symbolize/main.c),$(BUILD)/perfscope-symbolize) \
            $(if $(REPORT_SRC),$(BUILD)/perfscope-report) \
            $(if $(wildcard perfscope/main.c),$(BUILD)/perfscope)
EXAMPLES := $(if $(wildcard examples/toy_engine.c),$(BUILD)/toy-engine)

.PHONY: all deps test test-asan bench demo clean fuzz tools install uninstall
all: $(SHIM) $(CSHIM) $(TOOLS) $(EXAMPLES)

deps:
	@scripts/deps.sh

$(BUILD)/.deps-ok: scripts/deps.sh
	@mkdir -p $(BUILD)
	@scripts/deps.sh
	@touch $@

# The shim: position independent, initial-exec TLS only (the handler must never reach
# __tls_get_addr, which may allocate).
# libunwind is not linked but loaded with dlopen(RTLD_LOCAL) at start (preload/unwlib.h: linked,
# its _Unwind_* symbols took over the program's C++ unwinder ABI), by the soname of the libunwind
# pkg-config finds. zlib is not linked either: its one use, the kernel's config.gz when nothing
# else tells the tick rate, loads it there (preload/clock.c).
SHIM_LIBS = $(call PKGLIBS,libcjson) -ldl -lrt -Wl,-z,defs $(SHIM_WRAPS)
# The shim's own calls that take or let go of a descriptor number are announced to the target's
# close and dup2 (preload/shimopen.h): the linker routes the shim's objects' calls, none other.
SHIM_WRAPS = $(foreach f,open fopen opendir eventfd inotify_init1 sysconf fclose closedir,-Wl,--wrap=$(f))
# $(call SONAME_OF,PKG,FILE): the soname of FILE in the pkg-config package PKG's libdir.
SONAME_OF = $(shell objdump -p $(shell pkg-config --variable=libdir $(1))/$(2) 2>/dev/null | awk '$$1 == "SONAME" {print $$2}')
LIBUNWIND_DIR = $(shell pkg-config --variable=libdir libunwind)
LIBUNWIND_SO = $(call SONAME_OF,libunwind,libunwind.so)
# In the container shim, libunwind's own libraries (liblzma) are linked, loaded at start through
# RPATH $ORIGIN: a dlopen'd libunwind's dependencies are not searched there, and then match by
# soname what is already loaded.
LIBUNWIND_DEPS = -Wl,--push-state,--no-as-needed $(filter-out -lunwind,$(shell pkg-config --static --libs-only-l libunwind)) -Wl,--pop-state
ZLIB_SO = $(call SONAME_OF,zlib,libz.so)
# The shim's small static state packed into a few pages: every variable in a section of its own,
# laid out by alignment, so the arrays (32-byte aligned: the large buffers) go first and the
# scalars and small structs that every process writes at its start, and a fork child copies on
# write, sit together after them: 2 pages, against 23 among the buffers without it, where a
# fork+exec of /bin/true under the shim took 27 page faults more and 0.05 ms more CPU
# (docs/shim.md, "What a process pays"; t_shim_process_cost checks the layout).
SHIM_LAYOUT = -fdata-sections -Wl,--sort-section=alignment
SHIM_CFLAGS = $(SHIM_LAYOUT) $(call PKG,libunwind libcjson zlib) -DPS_ZLIB_SONAME='"$(or $(ZLIB_SO),libz.so.1)"' \
	  -DPS_LIBUNWIND_SONAME='"$(or $(LIBUNWIND_SO),libunwind.so.8)"'

$(SHIM): $(PRELOAD_SRC) $(PRELOAD_HDR) | $(BUILD)/.deps-ok
	$(CC) $(CFLAGS) -fPIC -shared -pthread -ftls-model=initial-exec -fvisibility=hidden \
	  $(SHIM_CFLAGS) -Ipreload -o $@ $(PRELOAD_SRC) $(SHIM_LIBS)

$(CSHIM): $(PRELOAD_SRC) $(PRELOAD_HDR) scripts/container-shim.sh | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -pthread -ftls-model=initial-exec -fvisibility=hidden \
	  $(SHIM_CFLAGS) -Ipreload -o $@ $(PRELOAD_SRC) $(SHIM_LIBS) $(LIBUNWIND_DEPS) \
	  -Wl,--disable-new-dtags,-rpath,'$$ORIGIN'
	scripts/container-shim.sh $(dir $@) $(LIBUNWIND_DIR)/$(or $(LIBUNWIND_SO),libunwind.so.8)

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

# report.html's CSS and JavaScript, built into the report as C arrays (scripts/embed.sh: od, sed).
HTML_GEN    := $(BUILD)/gen/html_assets.inc
HTML_ASSETS := report/html/report.css report/html/flame.js report/html/charts.js
$(HTML_GEN): $(HTML_ASSETS) scripts/embed.sh
	@mkdir -p $(dir $@)
	scripts/embed.sh $@ html_report_css report/html/report.css html_flame_js report/html/flame.js \
	  html_charts_js report/html/charts.js
$(BUILD)/obj/report/html/assets.o: $(HTML_GEN)
$(BUILD)/obj/report/html/assets.o: override CFLAGS += -I$(BUILD)/gen

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

# `make install [PREFIX=/usr/local] [DESTDIR=]`: the tools into PREFIX/bin, the shim into
# PREFIX/lib/perfscope/ (where an installed perfscope looks), perfscope.h, perfscope.pc, the
# Python module into PREFIX/share/perfscope/python, the man pages; `make uninstall` with the same
# PREFIX and DESTDIR removes what install wrote (its list: PREFIX/lib/perfscope/install-manifest)
# and the folders it created. What goes where: scripts/install.sh, docs/install.md.
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL_VARS = PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" BUILD="$(BUILD)"

install: $(SHIM) $(CSHIM) $(TOOLS)
	@$(INSTALL_VARS) scripts/install.sh install

uninstall:
	@$(INSTALL_VARS) scripts/install.sh uninstall

# ---- fuzz (every reader) ----------------------------------
# `make fuzz`: libFuzzer (clang, ASan, UBSan) over every reader of a file perfscope reads, one
# harness each (tests/fuzz/fuzz_<reader>.c), each for FUZZ_SECONDS (default 10, so the whole
# stays a few minutes), seeded from tests/fuzz/corpus/<reader>/ (real files and edge cases,
# tests/fuzz/corpus/README.md); new inputs go to $(BUILD)/fuzz/corpus-<reader> (never into the
# repository), crashes to $(BUILD)/fuzz/crash-<reader>-*; the run folders of the harnesses that
# need one live in a temporary folder (in /dev/shm where there is one), removed at the end.
# `make fuzz FUZZ_READERS="meta cases"` runs some. One line per reader: executions, new inputs,
# peak memory, crashes (libFuzzer stops at the first: 0 or 1); every reader runs, and make fails
# after the last when one crashed, hung (-timeout) or ran out of memory.
#   samples maps phases perfmap  the symbolizer's inputs (format/)
#   meta counters procs runlog   meta.json, counters.jsonl, procs.jsonl, perfscope.log: the
#                                format/ reader, and both tools' whole reading of a run folder
#   llamabench                   llama-bench output (a run's target.stdout)
#   runjson cases noise profile  run.json (the judgement, diff), cases, noise and null matrix
#                                files, profile.json as the report reads it
#   unsampled                    unsampled.jsonl (format/unsampledfile.c)
#   flame                        flame.json as report.html reads it (report/html/flametree.c)
# The harnesses link the tools' own sources (FUZZ_SRC, built once with the sanitizers into
# $(BUILD)/fuzz/libreaders.a); a harness that needs more (shim code) names it in FUZZ_EXTRA_<reader>.
#
# The marker line parser (preload/markerline.c, run inside the target on every line a script
# writes) joins by itself once both preload/markerline.c and tests/fuzz/fuzz_markerline.c exist,
# compiled with -Ipreload, seeded from tests/fuzz/corpus/markerline/.
FUZZ_SECONDS ?= 10
FUZZ_CC      ?= clang
FUZZ_READERS := samples maps phases perfmap meta counters procs runlog llamabench runjson cases \
                noise profile unsampled flame \
                $(and $(wildcard preload/markerline.c),$(wildcard tests/fuzz/fuzz_markerline.c),markerline)
FUZZ_EXTRA_markerline := preload/markerline.c
FUZZ_SRC     := $(SYMLIB_SRC) $(filter-out report/main.c,$(REPORT_SRC))
FUZZ_LIB     := $(BUILD)/fuzz/libreaders.a
FUZZ_BINS    := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_READERS))
FUZZ_FLAGS    = -std=gnu11 -g -O1 -D_GNU_SOURCE -fno-omit-frame-pointer -fno-sanitize-recover=all \
                $(call PKG,libcjson libdw) -Iinclude -Iformat -Isymbolize -Ireport -Ireport/util -I$(BUILD)/gen

$(BUILD)/fuzz/.clang-ok: | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs clang: apt-get install -y clang"; exit 1; }
	@touch $@

# The sources of the tools, instrumented for coverage (fuzzer-no-link) and the sanitizers.
$(BUILD)/fuzz/obj/%.o: %.c $(SYM_HDR) $(REPORT_HDR) | $(BUILD)/fuzz/.clang-ok
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<

$(BUILD)/fuzz/obj/report/html/assets.o: $(HTML_GEN)

$(FUZZ_LIB): $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_SRC))
	@rm -f $@
	ar rcs $@ $^

.SECONDEXPANSION:
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(FUZZ_LIB) $$(FUZZ_EXTRA_$$*) \
                      $$(wildcard $$(subst .c,.h,$$(FUZZ_EXTRA_$$*)))
	$(FUZZ_CC) $(FUZZ_FLAGS) -Wall -Wextra -Werror $(if $(FUZZ_EXTRA_$*),-Ipreload) -Itests/fuzz \
	  -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_EXTRA_$*) $(FUZZ_LIB) $(TOOL_LIBS)

fuzz: $(FUZZ_BINS)
	@tmp=$$(mktemp -d $$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp)/perfscope-fuzz.XXXXXX) || exit 1; \
	trap 'rm -rf "$$tmp"' EXIT; failed=; \
	for r in $(FUZZ_READERS); do \
	  mkdir -p $(BUILD)/fuzz/corpus-$$r; \
	  echo "fuzz: $$r reader for $(FUZZ_SECONDS) s"; \
	  if FUZZ_TMPDIR=$$tmp $(BUILD)/fuzz/fuzz_$$r -max_total_time=$(FUZZ_SECONDS) \
	      -timeout=10 -rss_limit_mb=2048 -close_fd_mask=2 -print_final_stats=1 \
	      -artifact_prefix=$(BUILD)/fuzz/crash-$$r- \
	      $(BUILD)/fuzz/corpus-$$r tests/fuzz/corpus/$$r 2>$(BUILD)/fuzz/$$r.log; then crash=0; \
	  else crash=1; failed="$$failed $$r"; tail -n 40 $(BUILD)/fuzz/$$r.log; fi; \
	  awk -v r=$$r -v c=$$crash '/stat::number_of_executed_units/ {x=$$2} /stat::new_units_added/ {n=$$2} \
	    /stat::peak_rss_mb/ {m=$$2} END {printf "fuzz: %s: %s executions, %s new inputs, %s MB peak, %d crashes\n", r, x, n, m, c}' \
	    $(BUILD)/fuzz/$$r.log; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed (inputs in $(BUILD)/fuzz/crash-*)"; exit 1; fi
