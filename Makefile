# hrm — build, test and install. No target needs root except `install` into a root-owned PREFIX.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
FUZZ_SECONDS ?= 60
FUZZ_BUILD := .build-fuzz

.PHONY: all build release test demo bench bench-decoder bench-hrv bench-dbus bench-watch bench-watch-floor bench-export bench-soak bench-serve fidelity bleak-check fuzz install uninstall format lint clean

all: build

build:
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

release:
	$(SWIFT) build -c release --static-swift-stdlib $(SWIFT_BUILD_FLAGS)

# hrm watching the simulated strap for about 20 s: no Bluetooth hardware needed.
DEMO_SCENARIO ?= basic
demo: build
	.build/debug/hrm-sim --scenario $(DEMO_SCENARIO) -- .build/debug/hrm watch --duration 20

SERVE_SUITES = ServeBinaryTests|ServePageBrowserTests|ServeFeedTests

# The whole suite: unit tests, the built hrm binary run as a process, and the D-Bus tests on a
# private dbus-daemon that the tests start themselves.
test:
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	# Three runs, so that the timing checks of one never share the two cores with the load of
	# another: the in-process suites, then hrm run as a binary, then hrm serve with its clients
	# at 200 notifications/s and a headless browser.
	$(SWIFT) test --skip-build --parallel --skip HRMCLITests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build --parallel --filter HRMCLITests --skip "$(SERVE_SUITES)" $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build --parallel --filter "$(SERVE_SUITES)" $(SWIFT_BUILD_FLAGS)

# Benchmarks live in their own package so that `make test` never builds the benchmark harness.
# The first run builds the harness (about 2 minutes). BENCH_FLAGS passes options through, e.g.
# BENCH_FLAGS="--filter decode".
bench: bench-decoder bench-hrv bench-dbus bench-watch bench-first-beat bench-mqtt bench-serve bench-export bench-soak

bench-decoder:
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --target HeartRateBenchmarks --no-progress $(BENCH_FLAGS)

# HRV: the artefact corrector and live window per beat, alpha1, the window's figures, a session.
bench-hrv:
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --target HRVBenchmarks --no-progress $(BENCH_FLAGS)

# libFuzzer over the measurement decoder: `make fuzz FUZZ_SECONDS=600`.
fuzz:
	@mkdir -p $(FUZZ_BUILD) fuzz-corpus
	swiftc -parse-as-library -O -sanitize=fuzzer,address -module-name HeartRateFuzz \
		Sources/HeartRate/*.swift Fuzz/HeartRateFuzz.swift -o $(FUZZ_BUILD)/heart-rate-fuzz
	$(FUZZ_BUILD)/heart-rate-fuzz -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		fuzz-corpus Fuzz/seeds

SHAREDIR ?= $(PREFIX)/share/hrm

install: release
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(SHAREDIR)/scenarios"
	install -m 0755 "$$($(SWIFT) build -c release --static-swift-stdlib --show-bin-path)/hrm" "$(DESTDIR)$(BINDIR)/hrm"
	install -m 0755 "$$($(SWIFT) build -c release --static-swift-stdlib --show-bin-path)/hrm-sim" "$(DESTDIR)$(BINDIR)/hrm-sim"
	install -m 0755 "$$($(SWIFT) build -c release --static-swift-stdlib --show-bin-path)/hrm-serve" "$(DESTDIR)$(BINDIR)/hrm-serve"
	install -m 0644 Scenarios/*.json "$(DESTDIR)$(SHAREDIR)/scenarios/"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/hrm" "$(DESTDIR)$(BINDIR)/hrm-sim" "$(DESTDIR)$(BINDIR)/hrm-serve"
	rm -rf "$(DESTDIR)$(SHAREDIR)"

# hrm-sim against the real BlueZ lab's recorded probe run (needs ../shared/realbluez, python3-gi).
REALBLUEZ ?= ../shared/realbluez
# bleak (unmodified) against hrm-sim, StartNotify and AcquireNotify: see Tests/Fidelity/bleak-check.sh.
bleak-check: build
	bash Tests/Fidelity/bleak-check.sh

fidelity: build
	.build/debug/hrm-sim --scenario lab -- /usr/bin/python3 $(REALBLUEZ)/probe.py > .build/probe-sim.txt 2>&1
	python3 Tests/Fidelity/compare-probe.py $(REALBLUEZ)/transcripts/probe.txt .build/probe-sim.txt

format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/HeartRateBenchmarks Benchmarks/HRVBenchmarks Fuzz

lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/HeartRateBenchmarks Benchmarks/HRVBenchmarks Fuzz

clean:
	rm -rf .build .build-* fuzz-corpus

# hrm watch against hrm-sim at 200 notifications/s (latency, CPU, RSS) and idle at 1 Hz: see
# Benchmarks/Watch/README.md.
# The binaries are built as `make release` builds them (static Swift runtime), as installed.
bench-watch:
	$(SWIFT) build -c release --static-swift-stdlib --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --static-swift-stdlib --product hrm-sim $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/Watch/watch_bench.py \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# hrm watch --mqtt at scale: one mosquitto broker, 20 simulated straps at 4 Hz, four hrm processes;
# latency to a paho-mqtt subscriber and CPU per notification with and without --mqtt. See
# Benchmarks/MQTT/README.md. paho-mqtt comes into .build/mqtt-venv.
bench-mqtt:
	$(SWIFT) build -c release --static-swift-stdlib --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --static-swift-stdlib --product hrm-sim $(SWIFT_BUILD_FLAGS)
	test -x .build/mqtt-venv/bin/python || { /usr/bin/python3 -m venv .build/mqtt-venv && .build/mqtt-venv/bin/pip install -q paho-mqtt; }
	/usr/bin/python3 Benchmarks/MQTT/mqtt_bench.py --python .build/mqtt-venv/bin/python \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# Time to the first beat: hrm watch and a plain bleak client against hrm-sim (start -> subscribed,
# strap back after a drop -> subscribed). bleak from .build/bleak-venv (made by .ci/run), else
# Debian's. See Benchmarks/FirstBeat/README.md.
bench-first-beat:
	$(SWIFT) build -c release --static-swift-stdlib --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --static-swift-stdlib --product hrm-sim $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/FirstBeat/first_beat.py \
		--python "$$(test -x .build/bleak-venv/bin/python && echo .build/bleak-venv/bin/python || echo /usr/bin/python3)" \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# hrm serve at 200 notifications/s to 10 WebSocket clients: latency from hrm-sim's send to each
# client, hrm-serve's CPU per notification and peak RSS. See Benchmarks/Serve/README.md. The clients
# use Python's websockets from .build/serve-venv (the venv the tests use).
bench-serve:
	$(SWIFT) build -c release --static-swift-stdlib --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --static-swift-stdlib --product hrm-serve $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --static-swift-stdlib --product hrm-sim $(SWIFT_BUILD_FLAGS)
	test -x .build/serve-venv/bin/python && .build/serve-venv/bin/python -c 'import websockets.asyncio.client' 2>/dev/null \
		|| { rm -rf .build/serve-venv && /usr/bin/python3 -m venv .build/serve-venv && .build/serve-venv/bin/pip install -q websockets; }
	/usr/bin/python3 Benchmarks/Serve/serve_bench.py --python .build/serve-venv/bin/python \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# hrm export of a generated 3-hour 1 Hz session with RR intervals, to every format (target: < 1 s).
bench-export:
	$(SWIFT) build -c release --static-swift-stdlib --product hrm $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/Export/export_bench.py --hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm"

# The same harness with a minimal C reader of the AcquireNotify socket in hrm's place: what this
# machine costs any reader (its RSS is the Python launcher's and means nothing).
bench-watch-floor:
	$(SWIFT) build -c release --static-swift-stdlib --product hrm-sim $(SWIFT_BUILD_FLAGS)
	@mkdir -p .build
	cc -O2 -Wall -Wextra -o .build/floor_reader Benchmarks/Watch/floor/floor_reader.c
	/usr/bin/python3 Benchmarks/Watch/watch_bench.py --label "floor reader (C)" \
		--hrm Benchmarks/Watch/floor/floor_launcher.py --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"

# D-Bus layer: round trip (ours vs python3-dbus) and signal throughput on a private bus.
bench-dbus:
	$(SWIFT) build -c release --product dbus-bench $(SWIFT_BUILD_FLAGS)
	dbus-run-session --config-file=Benchmarks/DBus/bus.conf -- \
		"$$($(SWIFT) build -c release --show-bin-path)/dbus-bench"

# hrm watch for SOAK_MINUTES (default 30) at 50 notifications/s, the link dropping every 5 minutes:
# RSS and open fds sampled every 10 s, every notification sent printed once. See Benchmarks/Soak.
SOAK_MINUTES ?= 30
bench-soak:
	$(SWIFT) build -c release --static-swift-stdlib --product hrm $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --static-swift-stdlib --product hrm-sim $(SWIFT_BUILD_FLAGS)
	/usr/bin/python3 Benchmarks/Soak/soak.py --minutes $(SOAK_MINUTES) \
		--hrm "$$($(SWIFT) build -c release --show-bin-path)/hrm" --sim "$$($(SWIFT) build -c release --show-bin-path)/hrm-sim"
