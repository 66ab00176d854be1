# hrm — build, test and install. No target needs root except `install` into a root-owned PREFIX.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
SHAREDIR ?= $(DATADIR)/hrm
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/hrm
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
DESTDIR ?=
STRIP ?= strip
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
FUZZ_SECONDS ?= 60
FUZZ_BUILD := .build-fuzz

.PHONY: all build release test-deps test-installed release-docs deps deb package-check test demo demo-readiness bench bench-decoder bench-hrv bench-ecg bench-dbus bench-watch bench-watch-floor bench-watch-compare bench-watch-footprint hot-functions bench-relay bench-export bench-soak bench-serve fidelity bleak-check fuzz install uninstall format lint doc-check clean

all: build

build:
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

# What `make release` builds, found without running swift (`sudo make install` has no swift on
# PATH): SwiftPM links .build/release to .build/<triple>/release, whatever the architecture.
RELEASE_BIN := .build/release
# Man pages and completions made from the release binaries, so that install only copies.
RELEASE_DOCS := .build/release-docs
PROGRAMS := hrm hrm-sim hrm-serve
# How every release build here compiles and links (make release, the benchmarks, hot-functions):
# one set of flags, because SwiftPM rebuilds everything when two builds' flags differ. The Swift
# runtime statically; every function in a section of its own, the dependencies' too (Package.swift
# can set that only for hrm's own targets), so that the link puts the functions a run executes side
# by side (Package.swift's `hotFunctionsFirst`) without dragging the rest of their files along:
# Benchmarks/Watch/README.md, "Issue #29, fourth session". No $ORIGIN run path: hrm loads no
# library of its own, and with one the loader looked for libm and libc in the binary's folder
# first (22 failed system calls at every start, and a folder a user may write to).
RELEASE := -c release --static-swift-stdlib --disable-local-rpath -Xswiftc -Xfrontend -Xswiftc -function-sections
# A PREFIX other than /usr/local is compiled into hrm-sim, which looks there for its scenarios when
# its binary is copied out of PREFIX/bin. The default passes nothing, so that the benchmarks'
# release builds (without it) reuse this one.
ifneq ($(PREFIX),/usr/local)
RELEASE_PREFIX_FLAGS := -Xcc '-DHRM_INSTALL_PREFIX="$(PREFIX)"'
endif

# The static link warns "the use of `mktemp' is dangerous": that is FoundationEssentials'
# createTemporaryFile (Data+Writing.swift.o, behind Data.write(options: .atomic)), which every
# program linking FoundationEssentials carries. hrm-sim uses Foundation; hrm and hrm-serve get it
# through swift-argument-parser (Utilities/Foundation.swift). hrm never writes through it (its
# files go through write(2) with O_EXCL), so the warning concerns code hrm does not run.
release:
	$(SWIFT) build $(RELEASE) $(RELEASE_PREFIX_FLAGS) $(SWIFT_BUILD_FLAGS)
	@bash packaging/static-link/check-libdbus.sh $(RELEASE_BIN)/hrm
	@$(MAKE) --no-print-directory release-docs

# swift-argument-parser's generate-manual, built from the copy SwiftPM already checked out: its
# `swift package plugin generate-manual` would rebuild every product without --static-swift-stdlib
# over the release build, and needs the whole package built in the configuration it documents.
MANUAL_TOOL := .build/generate-manual/release/generate-manual
MANUAL_DATE := $(shell git log -1 --format=%cs 2>/dev/null || date -u +%F)

$(MANUAL_TOOL):
	rm -rf .build/generate-manual-src && mkdir -p .build/generate-manual-src
	git -C .build/checkouts/swift-argument-parser archive HEAD | tar -x -C .build/generate-manual-src
	$(SWIFT) build -c release --package-path .build/generate-manual-src --scratch-path .build/generate-manual \
		--product generate-manual -Xswiftc -suppress-warnings

release-docs: $(MANUAL_TOOL)
	bash packaging/release-docs.sh $(RELEASE_BIN) $(MANUAL_TOOL) $(RELEASE_DOCS) $(MANUAL_DATE)

# The system packages hrm needs to build and run (and hrm-sim, for make demo), installed when
# missing; not the test tooling (.ci/run adds that).
deps:
	@need=""; \
	command -v pkg-config >/dev/null || need="$$need pkg-config"; \
	pkg-config --exists dbus-1 2>/dev/null || need="$$need libdbus-1-dev"; \
	pkg-config --exists libmosquitto 2>/dev/null || need="$$need libmosquitto-dev"; \
	[ -f /usr/include/sqlite3.h ] || need="$$need libsqlite3-dev"; \
	[ -f /usr/include/toml++/toml.h ] || need="$$need libtomlplusplus-dev"; \
	command -v dbus-daemon >/dev/null || need="$$need dbus-daemon"; \
	command -v python3 >/dev/null || need="$$need python3"; \
	if [ -z "$$need" ]; then echo "deps: all there"; exit 0; fi; \
	sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	echo "deps: installing$$need"; \
	$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$need

# hrm watching the simulated strap for about 20 s: no Bluetooth hardware needed.
DEMO_SCENARIO ?= basic
demo: build
	.build/debug/hrm-sim --scenario $(DEMO_SCENARIO) -- .build/debug/hrm watch --duration 20

# hrm readiness against hrm-sim's resting strap (2 minutes of beats in about a second), in a
# session library of its own under .build, never yours: three runs and its baseline is built.
demo-readiness: build
	XDG_DATA_HOME=$(CURDIR)/.build/demo-data .build/debug/hrm-sim --scenario morning -- .build/debug/hrm readiness

SERVE_SUITES = ServeBinaryTests|ServePageBrowserTests|ServeFeedTests|ServeMetricsTests

# The whole suite: unit tests, the built hrm binary run as a process, and the D-Bus tests on a
# private dbus-daemon that the tests start themselves.
# What the tests need beyond `make deps` (mosquitto, chromium, python3-dbus, the Python readers'
# venvs), installed when missing: quick when everything is there.
test-deps:
	@bash Tests/test-deps.sh

test: test-deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	# Three runs, so that the timing checks of one never share the two cores with the load of
	# another: the in-process suites, then hrm run as a binary, then hrm serve with its clients
	# at 200 notifications/s and a headless browser.
	$(SWIFT) test --skip-build --parallel --skip HRMCLITests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build --parallel --filter HRMCLITests --skip "$(SERVE_SUITES)" $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build --parallel --filter "$(SERVE_SUITES)" $(SWIFT_BUILD_FLAGS)

# The binary tests again, against what `make install` ships: the release build (optimised, static
# Swift runtime, stripped), installed into a PREFIX of its own and run from there through
# HRM_BINARY. The optimiser once lost what the debug build kept (the strap's info), so the build
# users get is tested, not only the debug one. Needs `make release` first.
INSTALLED := $(CURDIR)/.build/installed
test-installed: test-deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	rm -rf "$(INSTALLED)"
	$(MAKE) --no-print-directory install DESTDIR= PREFIX="$(INSTALLED)" >/dev/null
	HRM_BINARY="$(INSTALLED)/bin/hrm" $(SWIFT) test --skip-build --parallel --filter HRMCLITests --skip "$(SERVE_SUITES)" $(SWIFT_BUILD_FLAGS)
	HRM_BINARY="$(INSTALLED)/bin/hrm" $(SWIFT) test --skip-build --parallel --filter "$(SERVE_SUITES)" $(SWIFT_BUILD_FLAGS)

# Benchmarks live in their own package so that `make test` never builds the benchmark harness.
# The first run builds the harness (about 2 minutes). BENCH_FLAGS passes options through, e.g.
# BENCH_FLAGS="--filter decode".
bench: bench-decoder bench-hrv bench-ecg bench-dbus bench-watch bench-first-beat bench-relay bench-mqtt bench-serve bench-export bench-soak

bench-decoder:
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --target HeartRateBenchmarks --no-progress $(BENCH_FLAGS)

# HRV: the artefact corrector and live window per beat, alpha1, the window's figures, a session.
bench-hrv:
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --target HRVBenchmarks --no-progress $(BENCH_FLAGS)

# ECG and acceleration (#24): PMD frame decoding and R-peak detection per sample, then what
# hrm watch --ecg --acc costs against hrm watch (CPU, peak RSS) on hrm-sim's H10.
bench-ecg:
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --target ECGBenchmarks --no-progress $(BENCH_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/ECG/ecg_watch_bench.py \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# libFuzzer over the measurement decoder: `make fuzz FUZZ_SECONDS=600`.
fuzz:
	@mkdir -p $(FUZZ_BUILD) fuzz-corpus
	swiftc -parse-as-library -O -sanitize=fuzzer,address -module-name HeartRateFuzz \
		Sources/HeartRate/*.swift Fuzz/HeartRateFuzz.swift -o $(FUZZ_BUILD)/heart-rate-fuzz
	$(FUZZ_BUILD)/heart-rate-fuzz -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		fuzz-corpus Fuzz/seeds

# Copies what `make release` built and made; builds nothing, so `sudo make install` needs no swift.
# The binaries are stripped as dh_strip does (hrm-serve is 81 MB with its symbols, 27 MB without).
install:
	@for p in $(PROGRAMS); do test -x "$(RELEASE_BIN)/$$p" || { \
		echo "make install: $(RELEASE_BIN)/$$p is missing: run \`make release\` first, as yourself (not with sudo)" >&2; \
		exit 1; }; done
	@test -f $(RELEASE_DOCS)/man1/hrm.1 || { \
		echo "make install: $(RELEASE_DOCS) is missing: run \`make release\` first, as yourself (not with sudo)" >&2; \
		exit 1; }
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(SHAREDIR)/scenarios" "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(DOCDIR)" \
		"$(DESTDIR)$(BASHCOMPDIR)" "$(DESTDIR)$(ZSHCOMPDIR)" "$(DESTDIR)$(FISHCOMPDIR)" "$(DESTDIR)$(USERUNITDIR)"
	for p in $(PROGRAMS); do \
		install -m 0755 "$(RELEASE_BIN)/$$p" "$(DESTDIR)$(BINDIR)/$$p" && \
		$(STRIP) --remove-section=.comment --remove-section=.note "$(DESTDIR)$(BINDIR)/$$p" || exit 1; \
	done
	install -m 0644 Scenarios/*.json "$(DESTDIR)$(SHAREDIR)/scenarios/"
	for page in $(RELEASE_DOCS)/man1/*.1; do \
		sed 's|@DOCDIR@|$(DOCDIR)|g' "$$page" > "$(DESTDIR)$(MANDIR)/man1/$${page##*/}" && \
		chmod 0644 "$(DESTDIR)$(MANDIR)/man1/$${page##*/}" || exit 1; \
	done
	install -m 0644 $(RELEASE_DOCS)/doc/README.md $(RELEASE_DOCS)/doc/json-lines.md "$(DESTDIR)$(DOCDIR)/"
	for p in hrm hrm-sim; do \
		install -m 0644 $(RELEASE_DOCS)/completions/$$p.bash "$(DESTDIR)$(BASHCOMPDIR)/$$p" && \
		install -m 0644 $(RELEASE_DOCS)/completions/_$$p "$(DESTDIR)$(ZSHCOMPDIR)/_$$p" && \
		install -m 0644 $(RELEASE_DOCS)/completions/$$p.fish "$(DESTDIR)$(FISHCOMPDIR)/$$p.fish" || exit 1; \
	done
	sed 's|@BINDIR@|$(BINDIR)|g' packaging/hrm-record.service.in > "$(DESTDIR)$(USERUNITDIR)/hrm-record.service"
	chmod 0644 "$(DESTDIR)$(USERUNITDIR)/hrm-record.service"

uninstall:
	for p in $(PROGRAMS); do rm -f "$(DESTDIR)$(BINDIR)/$$p"; done
	rm -f "$(DESTDIR)$(MANDIR)/man1/hrm.1" "$(DESTDIR)$(MANDIR)/man1/"hrm-*.1
	rm -rf "$(DESTDIR)$(DOCDIR)"
	for p in hrm hrm-sim; do \
		rm -f "$(DESTDIR)$(BASHCOMPDIR)/$$p" "$(DESTDIR)$(ZSHCOMPDIR)/_$$p" "$(DESTDIR)$(FISHCOMPDIR)/$$p.fish"; \
	done
	rm -f "$(DESTDIR)$(USERUNITDIR)/hrm-record.service"
	rm -rf "$(DESTDIR)$(SHAREDIR)"

# hrm_<version>_<arch>.deb from the release build (dpkg-deb as a normal user; see packaging/).
deb:
	bash packaging/build-deb.sh

# After `make release`: the install into a temporary PREFIX, run from elsewhere; lintian over the
# .deb; the .deb installed with apt in a clean Debian 12 chroot (needs root and the mirror, else
# SKIPPED; debootstrap's result is cached in /var/cache/hrm-ci).
package-check: deb
	bash Tests/Packaging/install-check.sh
	bash Tests/Packaging/deb-lintian-check.sh
	bash Tests/Packaging/deb-chroot-check.sh

# hrm-sim against the real BlueZ lab's recorded probe run (needs ../shared/realbluez, python3-gi).
REALBLUEZ ?= ../shared/realbluez
# bleak (unmodified) against hrm-sim, StartNotify and AcquireNotify: see Tests/Fidelity/bleak-check.sh.
bleak-check: build
	bash Tests/Fidelity/bleak-check.sh

fidelity: build
	.build/debug/hrm-sim --scenario lab -- /usr/bin/python3 $(REALBLUEZ)/probe.py > .build/probe-sim.txt 2>&1
	python3 Tests/Fidelity/compare-probe.py $(REALBLUEZ)/transcripts/probe.txt .build/probe-sim.txt

format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/HeartRateBenchmarks Benchmarks/HRVBenchmarks Benchmarks/ECGBenchmarks Fuzz

lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/HeartRateBenchmarks Benchmarks/HRVBenchmarks Benchmarks/ECGBenchmarks Fuzz
	bash Tests/Packaging/registry-host-check.sh
	python3 Tests/DocComments/check_doc_comments.py

# Every public declaration of the library modules has a doc comment (also part of lint).
doc-check:
	python3 Tests/DocComments/check_doc_comments.py

clean:
	rm -rf .build .build-* fuzz-corpus

# hrm watch against hrm-sim at 200 notifications/s (latency, CPU, RSS) and idle at 1 Hz: see
# Benchmarks/Watch/README.md.
# The binaries are built as `make release` builds them (static Swift runtime), as installed.
bench-watch:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/Watch/watch_bench.py \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# hrm watch --relay against hrm-sim: 50 notifications/s relayed to 3 simulated consumers, strap to
# consumer latency and what the relay costs hrm watch, in pairs without and with it. See
# Benchmarks/Relay/README.md; the real-BlueZ latency is in the lab check's output.
bench-relay:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/Relay/relay_bench.py \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# hrm watch --mqtt at scale: one mosquitto broker, 20 simulated straps at 4 Hz, four hrm processes;
# latency to a paho-mqtt subscriber and CPU per notification with and without --mqtt. See
# Benchmarks/MQTT/README.md. paho-mqtt comes into .build/mqtt-venv.
bench-mqtt:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	test -x .build/mqtt-venv/bin/python || { /usr/bin/python3 -m venv .build/mqtt-venv && .build/mqtt-venv/bin/pip install -q paho-mqtt; }
	/usr/bin/python3 Benchmarks/MQTT/mqtt_bench.py --python .build/mqtt-venv/bin/python \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# Time to the first beat: hrm watch and a plain bleak client against hrm-sim (start -> subscribed,
# strap back after a drop -> subscribed). bleak from .build/bleak-venv (made by .ci/run), else
# Debian's. See Benchmarks/FirstBeat/README.md.
bench-first-beat:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/FirstBeat/first_beat.py \
		--python "$$(test -x .build/bleak-venv/bin/python && echo .build/bleak-venv/bin/python || echo /usr/bin/python3)" \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# hrm serve at 200 notifications/s to 10 WebSocket clients: latency from hrm-sim's send to each
# client, hrm-serve's CPU per notification and peak RSS. See Benchmarks/Serve/README.md. The clients
# use Python's websockets from .build/serve-venv (the venv the tests use).
bench-serve:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-serve $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	test -x .build/serve-venv/bin/python && .build/serve-venv/bin/python -c 'import websockets.asyncio.client' 2>/dev/null \
		|| { rm -rf .build/serve-venv && /usr/bin/python3 -m venv .build/serve-venv && .build/serve-venv/bin/pip install -q websockets; }
	/usr/bin/python3 Benchmarks/Serve/serve_bench.py --python .build/serve-venv/bin/python \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# hrm export of a generated 3-hour 1 Hz session with RR intervals, to every format (target: < 1 s).
bench-export:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/Export/export_bench.py --hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm"

# hrm sessions over a year of daily one-hour recordings (365 files, kept in .build/bench-library):
# indexing from nothing, listing from the index (target: <= 0.5 s), what hrm record's update of the
# index costs, and the reader's MB/s. LIBRARY_BENCH_FLAGS="--before OLD_HRM" compares the reader with
# an older hrm. See Benchmarks/Library/README.md.
.PHONY: bench-library
bench: bench-library
bench-library:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/Library/library_bench.py --hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" $(LIBRARY_BENCH_FLAGS)

# The same harness with a minimal C reader of the AcquireNotify socket in hrm's place: what this
# machine costs any reader (its RSS is the Python launcher's and means nothing).
bench-watch-floor:
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	@mkdir -p .build
	cc -O2 -Wall -Wextra -o .build/floor_reader Benchmarks/Watch/floor/floor_reader.c
	/usr/bin/python3 Benchmarks/Watch/watch_bench.py --label "floor reader (C)" \
		--hrm Benchmarks/Watch/floor/floor_launcher.py --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# The functions hrm watch runs, hottest first, and the data each notification touches (lackey),
# and the functions hrm serve runs, for the release links' symbol order (Package.swift,
# packaging/hot-functions): callgrind over runs against hrm-sim. Run after changes to what watch
# or serve do, and commit the files; a stale file costs pages, never a build.
hot-functions:
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	@# hrm linked again with lld's map: which input section each name is in, and how big.
	rm -f "$$($(SWIFT) build -c release --show-bin-path)/hrm"
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS) -Xlinker -Map=.build/hrm.map
	/usr/bin/python3 packaging/hot-functions/hot_functions.py --out packaging/hot-functions/hrm.order \
		--map .build/hrm.map \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"
	$(SWIFT) build $(RELEASE) --product hrm-serve $(SWIFT_BUILD_FLAGS)
	test -x .build/serve-venv/bin/python && .build/serve-venv/bin/python -c 'import websockets.asyncio.client' 2>/dev/null \
		|| { rm -rf .build/serve-venv && /usr/bin/python3 -m venv .build/serve-venv && .build/serve-venv/bin/pip install -q websockets; }
	/usr/bin/python3 Benchmarks/Serve/order_file.py --python .build/serve-venv/bin/python \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"
	@# SwiftPM does not see the files as inputs of the links: the next build links hrm and
	@# hrm-serve again only when they are gone.
	rm -f "$$($(SWIFT) build -c release --show-bin-path)/hrm" "$$($(SWIFT) build -c release --show-bin-path)/hrm-serve"

# Issue #29's three ratios: hrm watch --json, the C floor reader and a plain bleak client, side by
# side in rotating order against the same simulated strap (p99 against the floor's; whole-run CPU
# and peak RSS against bleak's), and hrm --version's start-up. bleak comes into .build/bleak-venv
# (as .ci/run makes it). See Benchmarks/Watch/README.md.
bench-watch-compare:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	@mkdir -p .build
	cc -O2 -Wall -Wextra -o .build/floor_reader Benchmarks/Watch/floor/floor_reader.c
	test -x .build/bleak-venv/bin/python || { /usr/bin/python3 -m venv .build/bleak-venv && .build/bleak-venv/bin/pip install -q bleak; }
	/usr/bin/python3 Benchmarks/Watch/side_by_side.py --bleak-python .build/bleak-venv/bin/python $(COMPARE_FLAGS) \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# What one notification runs on hrm watch's reader thread: instructions, and the lines and pages
# of code that most notifications run (callgrind against hrm-sim at 200/s; counted, not timed).
# FOOTPRINT_FLAGS="--functions 30" lists the functions with the most of that code.
bench-watch-footprint:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/Watch/footprint.py $(FOOTPRINT_FLAGS) \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# D-Bus layer: round trip (ours vs python3-dbus) and signal throughput on a private bus.
bench-dbus:
	$(SWIFT) build $(RELEASE) --product dbus-bench $(SWIFT_BUILD_FLAGS)
	dbus-run-session --config-file=Benchmarks/DBus/bus.conf -- \
		"$$($(SWIFT) build -c release --show-bin-path)/dbus-bench"

# hrm watch for SOAK_MINUTES (default 30) at 50 notifications/s, the link dropping every 5 minutes:
# RSS and open fds sampled every 10 s, every notification sent printed once. See Benchmarks/Soak.
SOAK_MINUTES ?= 30
bench-soak:
	$(SWIFT) build $(RELEASE) --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build $(RELEASE) --product hrm-sim $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/Soak/soak.py --minutes $(SOAK_MINUTES) \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"
