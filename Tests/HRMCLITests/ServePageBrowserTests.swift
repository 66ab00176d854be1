import BrokerSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// hrm serve's page in a real browser: Debian's chromium, headless, against `hrm serve` under
/// hrm-sim. The groups below run side by side, each one browser at a time: four chromiums at most.
///
/// The browser is driven over the DevTools protocol on a pipe rather than with `--dump-dom` and
/// `--screenshot`: those act the moment the page has loaded, before the feed has said anything,
/// and `--virtual-time-budget` never runs out while the page's EventSource is open (virtual time
/// stands still while a fetch is pending). Over the protocol the tests read the rendered DOM, in
/// real time, until it shows what they wait for.
@Suite(.timeLimit(.minutes(3)))
struct ServePageBrowserTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// hrm-sim's basic strap: named, so that hrm serve does not scan 3 s for the strongest.
    static let basic = "D2:4B:7E:10:20:30"
    /// HRM_SAVE_SCREENSHOTS=1 saves the screenshots as docs/serve-page.png and docs/serve-team.png.
    static let saving = ProcessInfo.processInfo.environment["HRM_SAVE_SCREENSHOTS"] == "1"
    /// Seconds of graph before a screenshot: more for the README's.
    static var history: Int { saving ? 8 : 3 }

    /// A link drop while the page watches.
    @Suite struct Drops {
        /// A link drop: the tile goes offline while the strap is away, and live again when hrm has
        /// reconnected it; the page's own connection to the feed stays up meanwhile.
        @Test func aDropShowsDisconnectedUntilTheStrapIsBack() async throws {
            guard Chromium.available() else { return }
            try await withServe("drops", ["--offline-text", "Signal lost", "D2:4B:7E:10:20:32"]) { serve in
                try await withChromium { browser in
                    let tab = try await browser.open(serve.url)
                    // The page may note a state twice in a row (two renders of one state): the
                    // order of the changes is what counts.
                    _ = try await tab.states("live, offline, live again") { states in
                        var changes: [String] = []
                        for state in states where state != changes.last { changes.append(state) }
                        return changes.firstRange(of: ["live", "offline", "live"]) != nil
                    }
                    let tiles = try await tab.tiles("one tile") { $0.count == 1 }
                    #expect(tiles[0].offlineText == "Signal lost", "--offline-text")
                }
            }
        }
    }

    /// hrm serve stopping, and coming back.
    @Suite(.serialized) struct Restarts {
        /// One strap: the live BPM, the heart beating with its RR intervals, the graph, then the
        /// disconnected state once hrm serve has stopped.
        @Test func oneStrapLiveThenDisconnected() async throws {
            guard Chromium.available() else { return }
            try await withServe("basic", [ServePageBrowserTests.basic]) { serve in
                try await withChromium { browser in
                    let tab = try await browser.open(serve.url, userAgent: Chromium.obs)
                    let tiles = try await tab.tiles("one live tile near 72 bpm") {
                        $0.count == 1 && $0[0].live && (60...85).contains($0[0].bpmValue) && $0[0].points > 1
                    }
                    let strap = tiles[0]
                    #expect(strap.device == "D2:4B:7E:10:20:30")
                    #expect(strap.name == "Polar H10 7E102030")
                    #expect(strap.battery == "battery 87 %" || strap.battery == "battery 86 %")
                    #expect(strap.contact == "contact")
                    #expect(strap.heart && strap.graph && strap.zone == nil && strap.rr == nil)
                    // Each beat lasts one of the strap's RR intervals (~830 ms at ~72 bpm).
                    #expect(
                        (600...1100).contains(strap.beat ?? 0), "beat \(String(describing: strap.beat)) ms")
                    #expect(
                        try await tab.evaluate(
                            "[document.documentElement, document.body].map((e) => getComputedStyle(e).backgroundColor).join()"
                        ) == "rgba(0, 0, 0, 0),rgba(0, 0, 0, 0)", "a transparent page in OBS")
                    // A plain browser gets a dark page, where white digits can be read; ?bg=transparent
                    // asks for the transparent one anywhere (#26 item 3).
                    let background = "getComputedStyle(document.body).backgroundColor"
                    let plain = try await browser.open(serve.url)
                    _ = try await plain.tiles("a live tile in a plain browser") {
                        $0.count == 1 && $0[0].live
                    }
                    #expect(try await plain.evaluate(background) == "rgb(17, 17, 17)")
                    // A link to /trends for a person in a browser; none over an OBS scene.
                    let link = "String(!document.getElementById('trends-link').hidden)"
                    #expect(try await plain.evaluate(link) == "true")
                    #expect(try await tab.evaluate(link) == "false")
                    let asked = try await browser.open(serve.url + "?bg=transparent")
                    _ = try await asked.tiles("a live tile with ?bg=transparent") {
                        $0.count == 1 && $0[0].live
                    }
                    #expect(try await asked.evaluate(background) == "rgba(0, 0, 0, 0)")

                    serve.stop()
                    let offline = try await tab.tiles("the disconnected state") {
                        $0.count == 1 && !$0[0].live
                    }
                    #expect(offline[0].offline == "disconnected")
                    #expect(offline[0].bpm == "--", "no frozen number")
                    #expect(offline[0].beat == nil, "the heart is still")
                    #expect(offline[0].points >= strap.points, "the graph keeps the history")
                }
            }
        }

        /// hrm serve restarted on the same port: the page reconnects by itself, re-reads the current
        /// state, and its graph keeps what it had.
        @Test func thePageReconnectsWhenHrmRestarts() async throws {
            guard Chromium.available() else { return }
            try await withServe("basic", [ServePageBrowserTests.basic], lives: 2) { serve in
                try await withChromium { browser in
                    let tab = try await browser.open(serve.url)
                    let before = try await tab.tiles("live") {
                        $0.count == 1 && $0[0].live && $0[0].points > 2
                    }
                    serve.stop(life: 1)
                    _ = try await tab.tiles("offline while hrm is down") { $0.count == 1 && !$0[0].live }
                    let after = try await tab.tiles("live again after the restart") {
                        $0.count == 1 && $0[0].live && $0[0].points > before[0].points
                    }
                    #expect(after[0].device == before[0].device)
                    #expect(after[0].name == "Polar H10 7E102030")
                }
            }
        }
    }

    /// The default look, one strap and two; screenshots.
    @Suite(.serialized) struct Looks {
        /// The default look through the zones (hrm-sim's climb, 95 to 185 bpm in 12 s): the heart in
        /// the zone's colour; a screenshot.
        @Test func theDefaultLookThroughTheZones() async throws {
            guard Chromium.available() else { return }
            try await withServe("climb", ["--max-hr", "200", "D2:4B:7E:10:20:40"]) { serve in
                try await withChromium { browser in
                    let tab = try await browser.open(serve.url, userAgent: Chromium.obs)
                    let tiles = try await tab.tiles("zone 4 or 5, 8 s of graph") {
                        $0.count == 1 && $0[0].live && $0[0].points >= ServePageBrowserTests.history
                            && ["zone 4", "zone 5"].contains($0[0].zone)
                    }
                    #expect((160...195).contains(tiles[0].bpmValue), "\(tiles[0])")
                    // The zone and the heart's colour read together: the strap climbs on meanwhile.
                    let colour = """
                        [...document.querySelectorAll('.tile:not([hidden])')].map((t) => \
                        t.dataset.zone + ' ' + getComputedStyle(t.querySelector('.heart')).color).join()
                        """
                    let zoneColours = ["4": "rgb(255, 167, 38)", "5": "rgb(239, 83, 80)"]
                    let seen = try await tab.evaluate(colour) ?? ""
                    let parts = seen.split(separator: " ", maxSplits: 1).map(String.init)
                    #expect(
                        parts.count == 2 && zoneColours[parts[0]] == parts.last,
                        "the heart in the zone's colour: \(seen)")
                    try await ServePageBrowserTests.checkScreenshot(tab, saveAs: "serve-page.png")
                }
            }
        }

        /// Two straps: a tile each, keyed by device, in the team view; `?device=` keeps one.
        @Test func twoStrapsGiveTwoTiles() async throws {
            guard Chromium.available() else { return }
            try await withServe("two-straps", ["--all", "--max-hr", "190"]) { serve in
                try await withChromium { browser in
                    let tab = try await browser.open(serve.url, userAgent: Chromium.obs)
                    let tiles = try await tab.tiles("two live tiles") { tiles in
                        tiles.count == 2
                            && tiles.allSatisfy {
                                $0.live && $0.points >= ServePageBrowserTests.history && $0.name.count > 8
                            }
                    }
                    let byDevice = Dictionary(uniqueKeysWithValues: tiles.map { ($0.device, $0) })
                    let garmin = try #require(byDevice["C0:FF:EE:00:00:01"])
                    let wahoo = try #require(byDevice["C0:FF:EE:00:00:02"])
                    #expect(
                        garmin.name == "HRM-Pro:123456" && (115...155).contains(garmin.bpmValue), "\(garmin)")
                    #expect(wahoo.name == "TICKR 1A2B" && (75...100).contains(wahoo.bpmValue), "\(wahoo)")
                    #expect(
                        try await tab.evaluate("String(document.body.classList.contains('team'))") == "true")
                    try await ServePageBrowserTests.checkScreenshot(tab, saveAs: "serve-team.png")

                    try await tab.navigate(serve.url + "?device=tickr")
                    let one = try await tab.tiles("only the TICKR") { $0.count == 1 && $0[0].live }
                    #expect(one[0].device == "C0:FF:EE:00:00:02")
                    #expect(
                        try await tab.evaluate("String(document.body.classList.contains('team'))") == "false")
                }
            }
        }
    }

    /// URL parameters, hostile and friendly.
    @Suite(.serialized) struct Parameters {
        /// URL parameters are text, never markup or style sheet: an injection attempt in each one
        /// (and in --offline-text) runs nothing, loads nothing and leaves the page working.
        @Test func hostileParametersInjectNothing() async throws {
            guard Chromium.available() else { return }
            let hostileOffline = #""</script><script>window.pwned = "offline-text"</script><b>"#
            try await withServe("basic", ["--offline-text", hostileOffline, ServePageBrowserTests.basic]) {
                serve in
                try await withChromium { browser in
                    let attack = ServePageBrowserTests.query([
                        ("color", "red;}</style><script>window.pwned = 'color'</script><style>"),
                        ("size", "1px;background:url(http://127.0.0.1:9/size)"),
                        ("font", "x;}body{display:none"),
                        ("bg", "url(http://127.0.0.1:9/bg)"),
                        ("show", "bpm,graph,<img src=x onerror=window.pwned='show'>"),
                        ("minutes", "1e400"),
                    ])
                    let tab = try await browser.open(serve.url + attack)
                    let tiles = try await tab.tiles("a live tile despite the parameters") {
                        $0.count == 1 && $0[0].live
                    }
                    #expect(tiles[0].graph && !tiles[0].heart, "show= still read, the junk part ignored")
                    #expect(tiles[0].offlineText == hostileOffline, "--offline-text shown as text")
                    let checks = """
                        JSON.stringify({pwned: String(window.pwned), scripts: document.scripts.length, \
                        images: document.images.length, styles: document.styleSheets.length, \
                        color: getComputedStyle(document.querySelector('.bpm')).color, \
                        size: getComputedStyle(document.querySelector('.bpm')).fontSize, \
                        display: getComputedStyle(document.body).display, \
                        bg: getComputedStyle(document.body).backgroundImage + getComputedStyle(document.body).backgroundColor, \
                        loaded: performance.getEntriesByType('resource').map((r) => r.name).filter((n) => !n.endsWith('/events'))})
                        """
                    let seen = try await tab.evaluate(checks)
                    #expect(
                        seen
                            == #"{"pwned":"undefined","scripts":1,"images":0,"styles":1,"color":"rgb(255, 255, 255)","size":"120px","display":"block","bg":"nonergb(17, 17, 17)","loaded":[]}"#
                    )

                    try await tab.navigate(
                        serve.url
                            + ServePageBrowserTests.query([
                                ("offline", "<img src=x onerror=\"window.pwned='offline'\">")
                            ]))
                    let again = try await tab.tiles("a live tile") { $0.count == 1 && $0[0].live }
                    #expect(again[0].offlineText == "<img src=x onerror=\"window.pwned='offline'\">")
                    #expect(
                        try await tab.evaluate("String(window.pwned) + document.images.length")
                            == "undefined0")
                }
            }
        }

        /// Below zone 1 the tile shows no badge (a "zone 0" read as a zone), while the heart keeps
        /// the colour of below zone 1 (#26 item 3).
        @Test func belowZoneOneShowsNoBadge() async throws {
            guard Chromium.available() else { return }
            // About 72 bpm against --max-hr 190: below zone 1 (95 bpm).
            try await withServe("basic", ["--max-hr", "190", ServePageBrowserTests.basic]) { serve in
                try await withChromium { browser in
                    let tab = try await browser.open(serve.url)
                    let tiles = try await tab.tiles("a live tile below zone 1") {
                        $0.count == 1 && $0[0].live && $0[0].bpmValue > 0
                    }
                    #expect(tiles[0].zone == nil, "\(tiles[0])")
                    #expect(
                        try await tab.evaluate("document.querySelector('.tile:not([hidden])').dataset.zone")
                            == "0")
                }
            }
        }

        /// Valid parameters do what the README says; `?show=bpm` shows the number alone.
        @Test func parametersTheme() async throws {
            guard Chromium.available() else { return }
            try await withServe("basic", [ServePageBrowserTests.basic]) { serve in
                try await withChromium { browser in
                    let tab = try await browser.open(
                        serve.url
                            + "?color=ffcc00&size=90px&font=serif&bg=%23102030&show=bpm,graph,rr&minutes=1")
                    let tiles = try await tab.tiles("a themed tile") {
                        $0.count == 1 && $0[0].live && $0[0].rr != nil
                    }
                    #expect(
                        tiles[0].graph && !tiles[0].heart && tiles[0].name.isEmpty && tiles[0].battery == nil)
                    #expect(tiles[0].rr?.hasPrefix("RR ") == true && tiles[0].rr?.hasSuffix(" ms") == true)
                    let style = """
                        ['color', 'fontSize', 'fontFamily'].map((p) => getComputedStyle(document.querySelector('.bpm'))[p])\
                        .concat(getComputedStyle(document.body).backgroundColor).join('|')
                        """
                    #expect(try await tab.evaluate(style) == "rgb(255, 204, 0)|90px|serif|rgb(16, 32, 48)")

                    try await tab.navigate(serve.url + "?show=bpm")
                    let bare = try await tab.tiles("the number alone") { $0.count == 1 && $0[0].live }
                    #expect(!bare[0].graph && !bare[0].heart && bare[0].zone == nil && bare[0].name.isEmpty)
                    #expect(
                        bare[0].battery == nil && bare[0].contact == nil
                            && (60...85).contains(bare[0].bpmValue))
                }
            }
        }
    }

    /// `/trends` in a real browser: the charts of a library of synthetic recordings
    /// (TrendsBinaryTests' plan), a point or a bar for each day that has the figure, the days'
    /// labels at either end, the values as hrm trends --json gives them; no script on the page.
    @Suite struct TrendsCharts {
        /// What the page shows of each chart.
        struct Chart: Decodable {
            let figure: String
            let kind: String
            let points: Int
            let bars: Int
            let periods: [String]
            let values: [String]
            let xLabels: [String]
            let yLabels: [String]
        }

        static let script = """
            JSON.stringify([...document.querySelectorAll("figure.chart")].map((f) => {
              const marks = [...f.querySelectorAll("circle.point, rect.bar")];
              return { figure: f.dataset.figure, kind: f.dataset.kind,
                points: f.querySelectorAll("circle.point").length, bars: f.querySelectorAll("rect.bar").length,
                periods: marks.map((m) => m.dataset.period), values: marks.map((m) => m.dataset.value),
                xLabels: [...f.querySelectorAll("text.x-label")].map((t) => t.textContent),
                yLabels: [...f.querySelectorAll("text.y-label")].map((t) => t.textContent) };
            }))
            """

        /// `script` once the document has loaded whole, `[]` before.
        static let whole = "document.readyState === 'complete' ? \(script) : '[]'"

        @Test func theLibrarysFiguresAsCharts() async throws {
            guard Chromium.available() else { return }
            let today = TrendsBinaryTests.today
            let library = try TrendsBinaryTests.library(today: today)
            defer { library.remove() }
            let expected = try await TrendsBinaryTests.trends(library, ["--json"])
            let periods = WatchBinaryTests.lines(expected.stdout)
            try #require(periods.count == 30)
            try await withServe("basic", [ServePageBrowserTests.basic], environment: library.environment) {
                serve in
                try await withChromium { browser in
                    let tab = try await browser.open(serve.url + "trends")
                    // The charts are read once the document is whole: a page still arriving shows
                    // its first chart only (a fresh-clone CI run saw that).
                    let charts = try await tab.value("the charts", of: Self.whole, as: [Chart].self) {
                        !$0.isEmpty
                    }
                    #expect(
                        charts.map(\.figure) == [
                            "resting HR", "RMSSD", "ln RMSSD", "alpha1", "zone 2", "recorded",
                        ])
                    #expect(try await tab.evaluate("String(document.scripts.length)") == "0", "no script")
                    let first = TrendsBinaryTests.day(today.addingTimeInterval(-29 * 86_400))
                    let last = TrendsBinaryTests.day(today)
                    let keys = [
                        "resting HR": ("resting_bpm", 1), "RMSSD": ("rmssd_ms", 1),
                        "ln RMSSD": ("ln_rmssd", 2),
                        "alpha1": ("alpha1", 2), "zone 2": ("zone2_min", 0), "recorded": ("recorded_min", 0),
                    ]
                    for chart in charts {
                        #expect(
                            chart.kind
                                == (chart.figure.hasPrefix("zone") || chart.figure == "recorded"
                                    ? "bar" : "line"))
                        #expect(chart.xLabels == [first, last], "\(chart.figure)")
                        #expect(chart.yLabels.count == 2, "\(chart.figure): the range's two ends")
                        guard let (key, places) = keys[chart.figure] else { continue }
                        // A mark for each day the JSON gives a value (recorded: each day with a session).
                        let days = periods.filter { period in
                            key == "recorded_min"
                                ? (period["sessions"] as? Int ?? 0) > 0
                                : TrendsBinaryTests.number(period[key]) != nil
                        }
                        #expect(chart.points + chart.bars == days.count, "\(chart.figure)")
                        #expect(chart.kind == "line" ? chart.bars == 0 : chart.points == 0)
                        #expect(
                            chart.periods == days.map { $0["period"] as? String ?? "" }, "\(chart.figure)")
                        let values = days.compactMap { TrendsBinaryTests.number($0[key]) }.map {
                            String(format: "%.\(places)f", $0)
                        }
                        #expect(chart.values == values, "\(chart.figure)")
                    }
                    let png = try await tab.fullScreenshot()
                    #expect(png.count > 10_000, "\(png.count) bytes")
                    try png.write(
                        to: ServePageBrowserTests.root.appendingPathComponent(".build/serve-trends.png"))
                    if ServePageBrowserTests.saving {
                        try png.write(
                            to: ServePageBrowserTests.root.appendingPathComponent("docs/serve-trends.png"))
                    }
                    // Bad queries and a strap the library does not have, as the page's own fetch sees them.
                    let statuses = try await tab.evaluate(
                        """
                        Promise.all(["trends?days=0", "trends?by=month", "trends?device=nobody", "trends?by=week"]
                          .map((u) => fetch(u).then((r) => r.status))).then((s) => s.join())
                        """, awaitPromise: true)
                    #expect(statuses == "400,400,404,200")
                    // By week: a point per week that has a value.
                    let weeks = WatchBinaryTests.lines(
                        try await TrendsBinaryTests.trends(library, ["--json", "--by", "week"]).stdout)
                    try await tab.navigate(serve.url + "trends?by=week")
                    let weekly = try await tab.value("the weekly charts", of: Self.whole, as: [Chart].self) {
                        $0.first?.periods.first?.contains("-W") == true
                    }
                    let restingWeeks = weeks.filter { TrendsBinaryTests.number($0["resting_bpm"]) != nil }
                    #expect(weekly.first?.figure == "resting HR")
                    #expect(weekly.first?.periods == restingWeeks.map { $0["period"] as? String ?? "" })
                }
            }
        }
    }

    // MARK: - Screenshots

    /// Screenshots of the page as it is, 800×450: transparent where the page draws nothing, and
    /// not blank. Then one over a dark scene, as OBS would show it, kept in .build (and saved as
    /// docs/NAME with HRM_SAVE_SCREENSHOTS=1, for the README).
    /// `hrm serve --ecg` on an H10: the tile draws the ECG's last seconds under the graph, from
    /// the feed's `ecg` events; a strap without ECG shows no such box.
    @Suite struct ECG {
        @Test func theECGTraceScrollsUnderTheBPM() async throws {
            guard Chromium.available() else { return }
            try await withServe("polar-h10-paired", ["--ecg", "A0:9E:1A:1A:2B:3C"]) { serve in
                try await withChromium { browser in
                    let tab = try await browser.open(serve.url, userAgent: Chromium.obs)
                    _ = try await tab.tiles("a live tile") { $0.count == 1 && $0[0].live }
                    // Four seconds of samples at 130 Hz (about seven frames of 73).
                    let tile = "document.querySelector('.tile[data-device=\"A0:9E:1A:1A:2B:3C\"]')"
                    let samples = "\(tile).dataset.ecgSamples || '0'"
                    let count = try await tab.value(
                        "4 s of ECG", of: "String(Number(\(samples)))", as: Int.self
                    ) {
                        $0 >= 520
                    }
                    #expect(count == 520, "the trace keeps 4 s at 130 Hz")
                    #expect(
                        try await tab.evaluate("String(\(tile).querySelector('.ecg').hidden)") == "false")
                    // What the canvas shows: painted columns across its width, and a trace that
                    // spans its height (R peaks near the top, the rest lower down).
                    let painted =
                        try await tab.evaluate(
                            """
                            (() => {
                              const c = \(tile).querySelector('.ecg');
                              const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                              let columns = 0, top = c.height, bottom = 0;
                              for (let x = 0; x < c.width; x++) {
                                let any = false;
                                for (let y = 0; y < c.height; y++) {
                                  if (d[(y * c.width + x) * 4 + 3] > 0) { any = true; top = Math.min(top, y); bottom = Math.max(bottom, y); }
                                }
                                if (any) columns++;
                              }
                              return columns + "," + top + "," + bottom + "," + c.width + "," + c.height;
                            })()
                            """) ?? ""
                    let figures = painted.split(separator: ",").compactMap { Int($0) }
                    #expect(figures.count == 5, "\(painted)")
                    if figures.count == 5 {
                        let (columns, top, bottom, width, height) = (
                            figures[0], figures[1], figures[2], figures[3], figures[4]
                        )
                        #expect(columns >= width * 9 / 10, "\(painted)")
                        #expect(top <= 10 && bottom >= height - 10, "\(painted)")
                    }
                    try await ServePageBrowserTests.checkScreenshot(tab, saveAs: "serve-ecg.png")
                }
            }
            try await withServe("basic", [ServePageBrowserTests.basic]) { serve in
                try await withChromium { browser in
                    let tab = try await browser.open(serve.url, userAgent: Chromium.obs)
                    _ = try await tab.tiles("a live tile") { $0.count == 1 && $0[0].live }
                    #expect(
                        try await tab.evaluate(
                            "String(document.querySelector('.tile[data-device=\"D2:4B:7E:10:20:30\"] .ecg').hidden)"
                        )
                            == "true")
                }
            }
        }
    }

    static func checkScreenshot(_ tab: Chromium.Tab, saveAs name: String) async throws {
        let png = try await tab.screenshot(background: nil)
        let size = try #require(Self.pngSize(png))
        #expect(size.width == 800 && size.height == 450)
        #expect(png.count > 8_000, "\(png.count) bytes")
        // Decoded by chromium itself: the page's pixels, counted.
        let counted = try await tab.evaluate(
            """
            (async () => { const i = new Image(); i.src = "data:image/png;base64,\(png.base64EncodedString())";
            await i.decode(); const c = document.createElement("canvas"); c.width = i.width; c.height = i.height;
            const g = c.getContext("2d"); g.drawImage(i, 0, 0); const d = g.getImageData(0, 0, c.width, c.height).data;
            let drawn = 0; for (let k = 3; k < d.length; k += 4) if (d[k] > 0) drawn++;
            return drawn + " " + d[d.length - 1]; })()
            """, awaitPromise: true)
        let parts = (counted ?? "").split(separator: " ").compactMap { Int($0) }
        try #require(parts.count == 2, "\(String(describing: counted))")
        #expect(parts[0] > 800 * 450 / 50, "\(parts[0]) pixels drawn: not blank")
        #expect(parts[0] < 800 * 450 / 2, "\(parts[0]) pixels drawn: the background is transparent")
        #expect(parts[1] == 0, "the bottom-right corner is transparent")

        let scene = try await tab.screenshot(background: (24, 26, 32))
        let build = root.appendingPathComponent(".build/\(name)")
        try scene.write(to: build)
        if saving {
            try scene.write(to: root.appendingPathComponent("docs/\(name)"))
        }
    }

    /// Width and height from a PNG's IHDR chunk.
    static func pngSize(_ png: Data) -> (width: Int, height: Int)? {
        let bytes = [UInt8](png.prefix(24))
        guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
            bytes[12..<16] == [0x49, 0x48, 0x44, 0x52]
        else { return nil }
        let big = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (big(16), big(20))
    }

    /// `?a=b&c=d`, every value percent-encoded.
    static func query(_ pairs: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = pairs.map {
            "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }
        return "?" + encoded.joined(separator: "&")
    }
}

// MARK: - hrm serve under hrm-sim

/// `hrm serve` under hrm-sim on a free port, in the background. It serves until `stop(life:)`
/// (or 60 s); with `lives: 2` a second hrm serve then starts on the same port.
final class ServeRun: Sendable {
    let port: UInt16
    let directory: URL
    var url: String { "http://127.0.0.1:\(port)/" }

    init(port: UInt16, directory: URL) {
        self.port = port
        self.directory = directory
    }

    /// Ends hrm serve number `life` (SIGTERM: it closes its clients and stops the strap).
    func stop(life: Int = 1) {
        _ = FileManager.default.createFile(
            atPath: directory.appendingPathComponent("stop\(life)").path, contents: nil)
    }
}

func withServe(
    _ scenario: String, _ arguments: [String] = [], lives: Int = 1, environment: [String: String] = [:],
    _ body: (ServeRun) async throws -> Void
) async throws {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("hrm-page-test-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let port = try freePort()
    let serve = ServeRun(port: port, directory: directory)
    let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }.joined(
        separator: " ")
    let script = """
        for life in $(seq 1 \(lives)); do
            '\(HRMProcess.binary.path)' serve --listen 127.0.0.1:\(port) --duration 60 \(quoted) 2>>'\(directory.path)/stderr' &
            pid=$!
            while kill -0 $pid 2>/dev/null && [ ! -e '\(directory.path)/stop'$life ]; do sleep 0.05; done
            kill -TERM $pid 2>/dev/null; wait $pid; echo "serve $life: exit $?"
        done
        """
    let running = Task {
        try await HRMProcess.runUnderSim(scenario, [], shell: script, environment: environment)
    }
    let outcome: (any Error)?
    do {
        guard await eventually(within: Patience.long, { isListening(port) }) else {
            throw TestFailure("hrm serve is not listening on \(port)")
        }
        try await body(serve)
        outcome = nil
    } catch {
        outcome = error
    }
    for life in 1...lives { serve.stop(life: life) }
    let result = try await running.value
    let log = (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
    if let outcome { throw TestFailure("\(outcome)\nhrm serve said: \(log)") }
    // hrm serve prints what hrm watch prints, then the script its exit status.
    let exits = result.stdoutLines.filter { $0.hasPrefix("serve ") }
    #expect(exits == (1...lives).map { "serve \($0): exit 0" }, "\(result.stdout)\(log)")
}

// MARK: - Chromium over the DevTools protocol

/// Headless chromium with `--remote-debugging-pipe`: the DevTools protocol as NUL-terminated JSON
/// on its file descriptors 3 (commands) and 4 (replies and events).
final class Chromium: Sendable {
    static let executable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/chromium" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()

    /// False without chromium, and the test fails saying so: `.ci/run` installs it, so a
    /// machine without it cannot pass for one that tested the page in a browser.
    static func available(test: String = #function) -> Bool {
        guard executable == nil else { return true }
        Issue.record("\(test): chromium is not installed (apt-get install chromium; .ci/run does)")
        return false
    }

    private let pid: Int32
    private let commands: FileHandle
    private let exited: HRMProcess.Exit
    private let profile: URL
    private let inbox = Inbox()

    /// Replies by id, filled by a reader thread of its own (never a thread of the cooperative pool).
    final class Inbox: Sendable {
        struct State {
            var pending = Data()
            var replies: [Int: Data] = [:]
            var nextID = 0
            var ended = false
        }
        let state = Mutex(State())

        func read(_ handle: FileHandle) {
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                state.withLock { state in
                    state.pending.append(data)
                    while let end = state.pending.firstIndex(of: 0) {
                        let message = state.pending[state.pending.startIndex..<end]
                        state.pending = Data(state.pending[(end + 1)...])
                        if let object = try? JSONSerialization.jsonObject(with: message) as? [String: Any],
                            let id = object["id"] as? Int
                        {
                            state.replies[id] = Data(message)
                        }
                    }
                }
            }
            state.withLock { $0.ended = true }
        }
    }

    private init(pid: Int32, commands: FileHandle, exited: HRMProcess.Exit, profile: URL) {
        self.pid = pid
        self.commands = commands
        self.exited = exited
        self.profile = profile
    }

    static func launch() throws -> Chromium {
        guard let executable else { throw TestFailure("no chromium") }
        let profile = FileManager.default.temporaryDirectory
            .appendingPathComponent("hrm-chromium-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // bash hands our pipes to chromium as its fds 3 and 4. A profile of its own: a second
        // chromium on the same profile would hand its work to the first and exit.
        process.arguments = [
            "-c",
            #"exec "$0" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --disable-background-networking --disable-component-update --disable-extensions --disable-sync --mute-audio --user-data-dir="$1" --remote-debugging-pipe about:blank 3<&0 4>&1 </dev/null >/dev/null 2>"$1/stderr""#,
            executable, profile.path,
        ]
        let toChromium = Pipe()
        let fromChromium = Pipe()
        process.standardInput = toChromium
        process.standardOutput = fromChromium
        let exited = HRMProcess.exit(of: process)
        try process.run()
        let browser = Chromium(
            pid: process.processIdentifier, commands: toChromium.fileHandleForWriting, exited: exited,
            profile: profile)
        let inbox = browser.inbox
        let replies = fromChromium.fileHandleForReading
        Thread { inbox.read(replies) }.start()
        return browser
    }

    /// Sends a command; its `result`, or an error with chromium's.
    @discardableResult
    func call(_ method: String, _ params: [String: Any] = [:], session: String? = nil) async throws
        -> [String: Any]
    {
        let id = inbox.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        var data = try JSONSerialization.data(withJSONObject: message)
        data.append(0)
        try commands.write(contentsOf: data)
        let deadline = ContinuousClock.now + Patience.long
        while ContinuousClock.now < deadline {
            let (reply, ended) = inbox.state.withLock { ($0.replies.removeValue(forKey: id), $0.ended) }
            if let reply {
                let object = try JSONSerialization.jsonObject(with: reply) as? [String: Any] ?? [:]
                if let error = object["error"] { throw TestFailure("chromium: \(method): \(error)") }
                return object["result"] as? [String: Any] ?? [:]
            }
            if ended { throw TestFailure("chromium ended: \(stderr)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("chromium did not answer \(method) within \(Patience.long)")
    }

    var stderr: String {
        let text = (try? String(contentsOf: profile.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(5).joined(separator: "\n")
    }

    /// A new tab, 800×450 CSS pixels, showing `url`.
    /// OBS's browser source names itself in its user agent (the page is transparent there).
    static let obs =
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/127.0.0.0 Safari/537.36 OBS/31.0.0"

    /// A tab on `url`, as a plain browser or (`userAgent`) as another, OBS's say.
    func open(_ url: String, userAgent: String? = nil) async throws -> Tab {
        let target = try await call("Target.createTarget", ["url": "about:blank"])
        guard let id = target["targetId"] as? String else { throw TestFailure("no target: \(target)") }
        let attached = try await call("Target.attachToTarget", ["targetId": id, "flatten": true])
        guard let session = attached["sessionId"] as? String else {
            throw TestFailure("no session: \(attached)")
        }
        let tab = Tab(browser: self, session: session)
        try await tab.call(
            "Emulation.setDeviceMetricsOverride",
            ["width": 800, "height": 450, "deviceScaleFactor": 1, "mobile": false])
        try await tab.call("Page.enable")
        if let userAgent { try await tab.call("Emulation.setUserAgentOverride", ["userAgent": userAgent]) }
        // A log of the tiles' state changes, kept by the page's side from its first moment: a drop
        // and the reconnection are seen however late the test polls.
        try await tab.call(
            "Page.addScriptToEvaluateOnNewDocument",
            [
                "source": """
                window.hrmStates = [];
                new MutationObserver((records) => { for (const r of records) hrmStates.push(r.target.dataset.state); })
                  .observe(document, { subtree: true, attributes: true, attributeFilter: ["data-state"] });
                """
            ])
        try await tab.navigate(url)
        return tab
    }

    /// Closes chromium (SIGKILL if it does not go) and removes its profile.
    func close() async {
        _ = try? await call("Browser.close")
        let gone = Task {
            await exited.wait()
            return true
        }
        let killer = Task { [pid] in
            try await Task.sleep(for: .seconds(10))
            kill(pid, SIGKILL)
        }
        _ = await gone.value
        killer.cancel()
        try? commands.close()
        try? FileManager.default.removeItem(at: profile)
    }

    struct Tab {
        let browser: Chromium
        let session: String

        @discardableResult
        func call(_ method: String, _ params: [String: Any] = [:]) async throws -> [String: Any] {
            try await browser.call(method, params, session: session)
        }

        func navigate(_ url: String) async throws {
            try await call("Page.navigate", ["url": url])
        }

        /// The value of `expression` as a string (nil for anything else).
        func evaluate(_ expression: String, awaitPromise: Bool = false) async throws -> String? {
            let result = try await call(
                "Runtime.evaluate",
                ["expression": expression, "returnByValue": true, "awaitPromise": awaitPromise])
            if let exception = result["exceptionDetails"] { throw TestFailure("page: \(exception)") }
            return (result["result"] as? [String: Any])?["value"] as? String
        }

        /// What each visible tile shows, polled until `condition` holds (30 s at most).
        func tiles(_ what: String, until condition: ([TileView]) -> Bool) async throws -> [TileView] {
            let deadline = ContinuousClock.now + Patience.long
            var tiles: [TileView] = []
            var failure: (any Error)? = nil
            while ContinuousClock.now < deadline {
                // Between a navigation and the new document, evaluating can fail: try again.
                do {
                    let json = try await evaluate(TileView.script) ?? "[]"
                    tiles = try JSONDecoder().decode([TileView].self, from: Data(json.utf8))
                    if condition(tiles) { return tiles }
                } catch {
                    failure = error
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            throw TestFailure(
                "the page never showed \(what); it shows \(tiles) \(failure.map { "\($0)" } ?? "")")
        }

        /// `expression`'s JSON value decoded as `T`, polled until `condition` holds (30 s at most).
        /// Between a navigation and the new document evaluating can fail, and a page still
        /// arriving shows part of itself: both are tried again.
        func value<T: Decodable>(
            _ what: String, of expression: String, as type: T.Type, until condition: (T) -> Bool
        ) async throws -> T {
            let deadline = ContinuousClock.now + Patience.long
            var last: T? = nil
            var failure: (any Error)? = nil
            while ContinuousClock.now < deadline {
                do {
                    let json = try await evaluate(expression) ?? "null"
                    let value = try JSONDecoder().decode(T.self, from: Data(json.utf8))
                    if condition(value) { return value }
                    last = value
                } catch {
                    failure = error
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw TestFailure(
                "the page never showed \(what); it shows \(last.map { "\($0)" } ?? "nothing") \(failure.map { "\($0)" } ?? "")"
            )
        }

        /// The tiles' states so far (`live`, `offline`), polled until `condition` holds.
        func states(_ what: String, until condition: ([String]) -> Bool) async throws -> [String] {
            let deadline = ContinuousClock.now + Patience.long
            var states: [String] = []
            while ContinuousClock.now < deadline {
                let joined = try? await evaluate("(window.hrmStates || []).join()")
                states = (joined ?? "").split(separator: ",").map(String.init)
                if condition(states) { return states }
                try await Task.sleep(for: .milliseconds(200))
            }
            throw TestFailure("the page never went \(what); it went \(states)")
        }

        /// A PNG of the whole page, as long as it is (the viewport's width).
        func fullScreenshot() async throws -> Data {
            let metrics = try await call("Page.getLayoutMetrics")
            let size = metrics["cssContentSize"] as? [String: Any]
            let width = (size?["width"] as? Double) ?? 800
            let height = (size?["height"] as? Double) ?? 450
            let shot = try await call(
                "Page.captureScreenshot",
                [
                    "format": "png", "captureBeyondViewport": true,
                    "clip": ["x": 0, "y": 0, "width": width, "height": height, "scale": 1],
                ])
            guard let base64 = shot["data"] as? String, let png = Data(base64Encoded: base64) else {
                throw TestFailure("no screenshot")
            }
            return png
        }

        /// A PNG of the viewport; `background` (RGB) shows through the transparent page, nil keeps
        /// it transparent.
        func screenshot(background: (Int, Int, Int)?) async throws -> Data {
            let color: [String: Any] =
                background.map { ["r": $0.0, "g": $0.1, "b": $0.2, "a": 1] } ?? [
                    "r": 0, "g": 0, "b": 0, "a": 0,
                ]
            try await call("Emulation.setDefaultBackgroundColorOverride", ["color": color])
            let shot = try await call("Page.captureScreenshot", ["format": "png"])
            guard let base64 = shot["data"] as? String, let png = Data(base64Encoded: base64) else {
                throw TestFailure("no screenshot")
            }
            return png
        }
    }
}

func withChromium(_ body: (Chromium) async throws -> Void) async throws {
    let browser = try Chromium.launch()
    do {
        try await body(browser)
    } catch {
        let said = browser.stderr
        await browser.close()
        throw TestFailure("\(error)\nchromium said: \(said)")
    }
    await browser.close()
}

/// One tile as the rendered DOM shows it; a part hidden (by `?show=` or for want of data) is nil
/// or false.
struct TileView: Decodable, CustomStringConvertible {
    let device: String
    let state: String
    let bpm: String
    let name: String
    let zone: String?
    let battery: String?
    let contact: String?
    let rr: String?
    let heart: Bool
    let graph: Bool
    /// The offline text, when it shows.
    let offline: String?
    /// The offline text the tile holds, shown or not.
    let offlineText: String
    /// Points on the graph.
    let points: Int
    /// The running beat animation's duration in ms: nil when the heart is still.
    let beat: Double?

    var live: Bool { state == "live" && bpm != "--" }
    var bpmValue: Int { Int(bpm) ?? -1 }
    var description: String { "\(device) \(state) \(bpm) bpm \(name) points \(points) beat \(beat ?? 0)" }

    static let script = """
        JSON.stringify([...document.querySelectorAll(".tile")].filter((t) => !t.hidden).map((t) => {
          const el = (s) => t.querySelector(s), shown = (s) => el(s).checkVisibility();
          const text = (s) => shown(s) ? el(s).textContent : null;
          const beat = el(".heart").getAnimations().find((a) => a.playState === "running");
          return { device: t.dataset.device, state: t.dataset.state || "", bpm: text(".bpm") ?? "",
            name: text(".name") ?? "", zone: text(".zone"), battery: text(".battery"), contact: text(".contact"),
            rr: text(".rr"), heart: shown(".heart"), graph: shown(".graph"), offline: text(".offline-text"),
            offlineText: el(".offline-text").textContent,
            points: (el(".graph path").getAttribute("d") || "").split(/[ML]/).length - 1,
            beat: beat ? beat.effect.getTiming().duration : null };
        }))
        """
}
