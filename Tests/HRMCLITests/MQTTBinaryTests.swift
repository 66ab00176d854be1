import BrokerSupport
import Foundation
import MQTT
import Testing

/// `hrm watch --mqtt` and `hrm team`, the built binary, against a real mosquitto broker of the
/// test's own, checked with mosquitto's own clients.
@Suite struct MQTTBinaryTests {
    /// True with the broker and its clients; else the test fails saying what is missing (.ci/run
    /// installs them: their absence is never a silent pass).
    static func available(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let missing = Tools.brokerMissing else { return true }
        Issue.record(Comment(rawValue: missing), sourceLocation: sourceLocation)
        return false
    }

    /// `topic payload` lines of a `-F "%t %p"` subscriber, as pairs.
    static func messages(_ lines: [String]) -> [(topic: String, payload: String)] {
        lines.compactMap { line in
            guard let space = line.firstIndex(of: " ") else { return nil }
            return (String(line[..<space]), String(line[line.index(after: space)...]))
        }
    }

    static func measurementLines(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix(#"{"type":"measurement""#) }
    }

    /// Every measurement hrm printed reaches the broker as the same JSON, in order, on the strap's
    /// topic; the retained topics hold the last BPM, state, info and battery, `offline` after a
    /// clean stop, and Home Assistant's configs.
    @Test func publishesTheTopicContract() async throws {
        guard Self.available() else { return }
        try await withBroker { broker in
            let live = try broker.subscriber(topics: ["#"], format: "%t %p")
            let result = try await HRMProcess.runUnderSim(
                "two-straps",
                [
                    "watch", "--all", "--json", "--count", "6", "--mqtt", "mqtt://127.0.0.1:\(broker.port)",
                    "--mqtt-id", "pi-test",
                ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(
                await live.wait {
                    $0.contains("pi-test/status offline") || $0.contains("hrm/pi-test/status offline")
                })
            let seen = Self.messages(live.lines)
            let printed = Self.measurementLines(result.stdout)
            #expect(printed.count == 6)
            let published = seen.filter { $0.topic.hasSuffix("/measurement") }
            #expect(published.map(\.payload) == printed, "the same JSON, in order")
            for (topic, payload) in published {
                let device = (try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])?[
                    "device"]
                let level = (device as? String ?? "").lowercased().replacingOccurrences(of: ":", with: "")
                #expect(topic == "hrm/pi-test/\(level)/measurement")
            }
            #expect(seen.first?.topic == "hrm/pi-test/status" && seen.first?.payload == "online")

            let retained = try await broker.retained("hrm/pi-test/#", count: 13, timeout: 5)
            func value(_ topic: String) -> String? {
                retained.first { $0.hasPrefix(topic + " 1 ") }.map { String($0.dropFirst(topic.count + 3)) }
            }
            #expect(value("hrm/pi-test/status") == "offline")
            let lastBPM = try #require(value("hrm/pi-test/c0ffee000001/bpm"))
            #expect(Int(lastBPM) != nil, "a plain number: \(lastBPM)")
            #expect(value("hrm/pi-test/c0ffee000001/battery") == "64")
            #expect(value("hrm/pi-test/c0ffee000002/state")?.contains(#""state":"stopped""#) == true)
            #expect(value("hrm/pi-test/c0ffee000002/info")?.contains(#""name":"TICKR 1A2B""#) == true)
            #expect(value("hrm/pi-test/c0ffee000001/summary")?.contains(#""type":"summary""#) == true)

            let configs = try await broker.retained("homeassistant/#", count: 4, timeout: 5)
            #expect(configs.count == 4, "\(configs)")
            let bpmConfig = try #require(
                configs.first { $0.hasPrefix("homeassistant/sensor/hrm_c0ffee000001_bpm/config 1 ") })
            let json = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(
                        bpmConfig.dropFirst("homeassistant/sensor/hrm_c0ffee000001_bpm/config 1 ".count).utf8)
                )
                    as? [String: Any])
            #expect(json["state_topic"] as? String == "hrm/pi-test/c0ffee000001/bpm")
            #expect(json["availability_topic"] as? String == "hrm/pi-test/status")
            #expect((json["device"] as? [String: Any])?["manufacturer"] as? String == "Garmin")
        }
    }

    /// Home Assistant saying `online` (it restarted) gets the configs again; `--no-ha-discovery`
    /// publishes none.
    @Test func homeAssistantGetsTheConfigsAgain() async throws {
        guard Self.available() else { return }
        try await withBroker { broker in
            let live = try broker.subscriber(
                topics: ["homeassistant/sensor/#", "hrm/+/+/measurement"], format: "%t %p")
            // hrm runs until the configs came again (events, not a --duration).
            let steering = Steering()
            async let run = HRMProcess.runUnderSim(
                "basic",
                ["watch", "--json", "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--mqtt-id", "ha"],
                patience: .seconds(120), terminateWhen: steering.check)
            #expect(await live.wait { $0.contains { $0.contains("/measurement ") } })
            #expect(live.lines.filter { $0.contains("_bpm/config") }.count == 1)
            try await broker.publish("homeassistant/status", "online")
            #expect(await live.wait { $0.filter { $0.contains("_bpm/config") }.count == 2 })
            steering.stop()
            let result = try await run
            #expect(result.status == 0, "\(result.stderr)")

            let quiet = try broker.subscriber(topics: ["#"], format: "%t %p")
            let none = try await HRMProcess.runUnderSim(
                "basic",
                [
                    "watch", "--count", "1", "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--mqtt-id",
                    "quiet",
                    "--no-ha-discovery",
                ])
            #expect(none.status == 0, "\(none.stderr)")
            #expect(await quiet.wait { $0.contains("hrm/quiet/status offline") })
            #expect(
                !quiet.lines.contains {
                    $0.hasPrefix("homeassistant/sensor/hrm_d24b7e102030") && $0.contains("quiet")
                })
        }
    }

    /// `kill -9`: no goodbye, so the broker publishes the last will: `offline`.
    @Test func theLastWillAfterKill9() async throws {
        guard Self.available() else { return }
        try await withBroker { broker in
            let live = try broker.subscriber(topics: ["hrm/will/#"], format: "%t %p")
            let pidFile = WatchBinaryTests.temporary("hrm.pid")
            defer { try? FileManager.default.removeItem(atPath: pidFile) }
            let hrm = HRMProcess.binary.path
            async let run = HRMProcess.runUnderSim(
                "basic", [],
                shell:
                    "'\(hrm)' watch --duration 30 --mqtt mqtt://127.0.0.1:\(broker.port) --mqtt-id will & echo $! > '\(pidFile)'; wait"
            )
            #expect(await live.wait { $0.contains { $0.contains("/measurement ") } })
            let pid = try #require(
                Int32(
                    try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(
                        in: .whitespacesAndNewlines)))
            kill(pid, SIGKILL)
            #expect(await live.wait { $0.last == "hrm/will/status offline" }, "\(live.lines.suffix(3))")
            _ = try await run
        }
    }

    /// The broker stops in the middle of a session, and stays away while hrm prints two
    /// measurements: watching goes on, hrm says so, and every measurement it printed reaches the
    /// subscriber, in order, once the broker is back (a persistent session keeps the subscriber's
    /// place across the restart). Each step waits for the one before, not for a time.
    @Test func aBrokerRestartLosesNothing() async throws {
        guard Self.available() else { return }
        try await withBroker(persistence: true) { broker in
            let subscriber = try broker.subscriber(
                topics: ["hrm/+/+/measurement", "probe/restart"], format: "%t %p",
                extra: ["-c", "-i", "restart-witness"])
            // Subscribed once it has printed a probe of its own (not after a guessed half second).
            let prober = try MQTTClient(try broker.url(), options: MQTTOptions(clientID: "restart-prober"))
            try await prober.connect()
            #expect(
                await subscriber.waitUntilSubscribed(
                    prober, probe: MQTTMessage(topic: "probe/restart", text: "1")))
            await prober.close(within: .seconds(5))
            func measurements(_ lines: [String]) -> [(topic: String, payload: String)] {
                Self.messages(lines).filter { $0.topic != "probe/restart" }
            }
            let steering = Steering()
            async let run = HRMProcess.runUnderSim(
                "basic",
                ["watch", "--json", "--mqtt", "mqtt://127.0.0.1:\(broker.port)", "--mqtt-id", "r"],
                patience: .seconds(120), terminateWhen: steering.check)
            #expect(await subscriber.wait { measurements($0).count >= 1 })
            await broker.stop()
            let before = Self.measurementLines(steering.stdout).count
            #expect(
                await steering.until {
                    $0.contains(#""code":"mqtt_disconnected""#)
                        && Self.measurementLines($0).count >= before + 2
                }, "hrm saw the broker go and went on printing")
            let duringOutage = Self.measurementLines(steering.stdout).count
            try await broker.start()
            #expect(await subscriber.wait { measurements($0).count >= duringOutage }, "hrm sent again")
            steering.stop()
            let result = try await run
            #expect(result.status == 0, "\(result.stderr)")
            let printed = Self.measurementLines(result.stdout)
            #expect(printed.count >= duringOutage)
            #expect(await subscriber.wait { measurements($0).count >= printed.count })
            var received: [String] = []
            for (_, payload) in measurements(subscriber.lines)
            where received.last != payload && !received.contains(payload) {
                received.append(payload)
            }
            #expect(received == printed, "\(received.count) received, \(printed.count) printed")
            #expect(result.stderr.contains("lost the MQTT broker"), "\(result.stderr)")
            #expect(result.stderr.contains("again; sending"), "\(result.stderr)")
            #expect(result.stdout.contains(#""code":"mqtt_disconnected""#))
        }
    }

    /// A broker that refuses the credentials, or none at all: a clear error before hrm touches the
    /// strap.
    @Test func refusedOrUnreachableBeforeTheStrap() async throws {
        guard Self.available() else { return }
        try await withBroker(users: ["coach": "secret"]) { broker in
            let log = WatchBinaryTests.temporary("refused.jsonl")
            defer { try? FileManager.default.removeItem(atPath: log) }
            let refused = try await HRMProcess.runUnderSim(
                "basic", ["watch", "--json", "--mqtt", "mqtt://coach:hunter2x@127.0.0.1:\(broker.port)"],
                log: log)
            #expect(refused.status == 77, "\(refused.stderr)")
            #expect(refused.stderr.contains("MQTT:"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("hunter2x"), "the password is never printed")
            #expect(refused.stdout.contains(#""code":"mqtt_refused""#))
            #expect(!refused.stdout.contains("connecting"))
            let calls = try WatchBinaryTests.calls(log)
            #expect(!calls.contains("Connect"), "\(calls)")

            let accepted = try await HRMProcess.runUnderSim(
                "basic", ["watch", "--count", "1", "--mqtt", "mqtt://coach:secret@127.0.0.1:\(broker.port)"])
            #expect(accepted.status == 0, "\(accepted.stderr)")
        }
        let port = try freePort()
        let unreachable = try await HRMProcess.runUnderSim(
            "basic", ["watch", "--mqtt", "mqtt://127.0.0.1:\(port)"])
        #expect(unreachable.status == 69, "\(unreachable.stderr)")
        #expect(unreachable.stderr.contains("127.0.0.1:\(port)"), "\(unreachable.stderr)")
    }

    /// Two hrm processes as two hosts publishing to one broker; `hrm team --json` shows both, each
    /// measurement with its source.
    @Test func twoHostsInOneTeam() async throws {
        guard Self.available() else { return }
        try await withBroker { broker in
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let team = try Child(
                HRMProcess.binary.path,
                ["team", "mqtt://127.0.0.1:\(broker.port)", "--json", "--count", "8"],
                output: directory.appendingPathComponent("team.txt"))
            // Subscribed once it has said so on stderr (merged into the same file).
            #expect(await eventually { team.text.contains("connected to") })
            let hrm = HRMProcess.binary.path
            let url = "mqtt://127.0.0.1:\(broker.port)"
            let hosts = try await HRMProcess.runUnderSim(
                "two-straps", [],
                shell: """
                    '\(hrm)' watch C0:FF:EE:00:00:01 --count 5 --mqtt \(url) --mqtt-id host-a > /dev/null &
                    '\(hrm)' watch C0:FF:EE:00:00:02 --count 5 --mqtt \(url) --mqtt-id host-b > /dev/null &
                    wait
                    """)
            #expect(hosts.status == 0, "\(hosts.stderr)")
            #expect(await team.waitForExit(timeout: .seconds(30)))
            #expect(team.status == 0, "\(team.text)")
            let lines = team.lines.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(lines.count == 8, "\(team.text)")
            let sources = Set(lines.compactMap { $0["source"] as? String })
            #expect(sources == ["host-a", "host-b"])
            for line in lines {
                #expect(line["type"] as? String == "measurement")
                let expected =
                    line["source"] as? String == "host-a" ? "C0:FF:EE:00:00:01" : "C0:FF:EE:00:00:02"
                #expect(line["device"] as? String == expected)
            }
        }
    }

    /// `hrm team` without URL takes the broker from the config file's [mqtt] url (as `watch`
    /// does); with neither it is a usage error.
    @Test func teamTakesTheBrokerFromTheConfigFile() async throws {
        guard Self.available() else { return }
        try await withBroker { broker in
            let home = try ConfigBinaryTests.Home(
                """
                [mqtt]
                url = "mqtt://127.0.0.1:\(broker.port)"
                id = "host-a"
                """)
            defer { home.cleanUp() }
            let hrm = HRMProcess.binary.path
            let result = try await HRMProcess.runUnderSim(
                "two-straps", [],
                shell: """
                    '\(hrm)' team --json --count 3 2> "$XDG_CONFIG_HOME/team.err" & team=$!
                    for i in $(seq 100); do grep -q 'connected to' "$XDG_CONFIG_HOME/team.err" && break; sleep 0.1; done
                    '\(hrm)' watch C0:FF:EE:00:00:01 --count 5 > /dev/null
                    wait $team
                    """, environment: home.environment)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdoutLines.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(lines.count == 3, "\(result.stdout)")
            #expect(lines.allSatisfy { $0["source"] as? String == "host-a" })
        }
        let none = try ConfigBinaryTests.Home(nil)
        defer { none.cleanUp() }
        let bare = try await HRMProcess.runUnderSim("basic", ["team"], environment: none.environment)
        #expect(bare.status == 64)
        #expect(bare.stderr.contains("give the broker's URL"), "\(bare.stderr)")
    }

    /// `hrm serve --mqtt-team` stops by itself as without it: after `--duration`, and after
    /// `--count` measurements from the broker (as `hrm team --count`); both were ignored, so it
    /// ran until killed. (`timeout 60` only proves it did not hang: 124 if it had to kill it.)
    @Test func serveTeamStopsAtItsLimits() async throws {
        guard Self.available() else { return }
        try await withBroker { broker in
            let hrm = HRMProcess.binary.path
            let url = "mqtt://127.0.0.1:\(broker.port)"
            let result = try await HRMProcess.runUnderSim(
                "two-straps", [],
                shell: """
                    '\(hrm)' watch C0:FF:EE:00:00:01 --mqtt \(url) --mqtt-id bike-1 --duration 30 > /dev/null & watch=$!
                    timeout 60 '\(hrm)' serve --mqtt-team \(url) --listen 127.0.0.1:0 --duration 2 2> /dev/null
                    echo "duration $?"
                    timeout 60 '\(hrm)' serve --mqtt-team \(url) --listen 127.0.0.1:0 --count 3 2> /dev/null
                    echo "count $?"
                    kill $watch; wait $watch
                    """)
            #expect(result.stdoutLines.contains("duration 0"), "\(result.stdout) \(result.stderr)")
            #expect(result.stdoutLines.contains("count 0"), "\(result.stdout) \(result.stderr)")
        }
    }

    /// `hrm serve --mqtt-team`: the straps two hosts publish, served as one team: /api/current names
    /// each strap's host, and the feed carries each event with its `source`; a host that goes away
    /// shows as disconnected.
    @Test func serveTakesTheTeamFromTheBroker() async throws {
        guard Self.available() else { return }
        try await withBroker { broker in
            let hrm = HRMProcess.binary.path
            let url = "mqtt://127.0.0.1:\(broker.port)"
            let port = try freePort()
            let result = try await HRMProcess.runUnderSim(
                "two-straps", [],
                shell: """
                    '\(hrm)' watch C0:FF:EE:00:00:01 --mqtt \(url) --mqtt-id bike-1 > /dev/null & one=$!
                    '\(hrm)' watch C0:FF:EE:00:00:02 --mqtt \(url) --mqtt-id bike-2 > /dev/null & two=$!
                    '\(hrm)' serve --mqtt-team \(url) --listen 127.0.0.1:\(port) 2> /dev/null & serve=$!
                    # Until both straps have a measurement in the snapshot (on a loaded machine that
                    # can take a while: up to 90 s, which only proves "not hung").
                    for i in $(seq 450); do
                        [ "$(curl -s http://127.0.0.1:\(port)/api/current | grep -o '"type":"measurement"' | wc -l)" -ge 2 ] && break
                        sleep 0.2
                    done
                    curl -s http://127.0.0.1:\(port)/api/current; echo
                    timeout 1 curl -sN http://127.0.0.1:\(port)/events | grep '^data: ' | sed 's/^data: //'
                    # The hosts go (told to stop once the snapshot has them, however slow the
                    # machine), and the team shows them gone: up to 90 s only proves "not hung".
                    kill -INT $one $two; wait $one $two
                    for i in $(seq 450); do
                        [ "$(curl -s http://127.0.0.1:\(port)/api/current | grep -c '"state":"connected"')" -eq 0 ] && break
                        sleep 0.2
                    done
                    curl -s http://127.0.0.1:\(port)/api/current; echo
                    kill $serve; wait $serve; echo "serve $?"
                    """)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdoutLines
            let first = try #require(
                lines.first.flatMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                })
            let straps = try #require(first["straps"] as? [[String: Any]])
            #expect(Set(straps.compactMap { $0["source"] as? String }) == ["bike-1", "bike-2"], "\(straps)")
            for strap in straps {
                let measurement = strap["measurement"] as? [String: Any]
                #expect(measurement?["source"] as? String == strap["source"] as? String)
                #expect((measurement?["bpm"] as? Int ?? 0) > 0)
            }
            let events = lines.dropFirst().compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.filter { $0["type"] != nil }
            #expect(
                events.contains { $0["type"] as? String == "info" && $0["source"] as? String == "bike-1" })
            #expect(events.allSatisfy { $0["source"] is String }, "every event names its host")
            let last = try #require(
                lines.last(where: { $0.hasPrefix(#"{"straps""#) }).flatMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                })
            let after = (last["straps"] as? [[String: Any]]) ?? []
            #expect(
                after.count == 2 && after.allSatisfy { $0["state"] as? String != "connected" }, "\(after)")
            #expect(lines.last == "serve 0")
        }
    }

    /// A broker holding thousands of retained fake hosts: on a 40-line terminal, `hrm team` keeps
    /// its table to the screen (a redraw never moves up 40 lines or more), says how many straps it
    /// left out, and that it keeps at most its capacity.
    @Test func teamKeepsItsTableToTheScreen() async throws {
        guard Self.available() else { return }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            Issue.record("/usr/bin/script (util-linux) is not installed")
            return
        }
        try await withBroker { broker in
            let publisher = try MQTTClient(try broker.url(), options: MQTTOptions(clientID: "fake-hosts"))
            try await publisher.connect()
            for host in 0..<3000 {
                publisher.publish(
                    MQTTMessage(
                        topic: "hrm/fake\(host)/c0ffee000001/info", text: #"{"type":"info","name":"fake"}"#,
                        retain: true))
            }
            await publisher.close(within: .seconds(30))
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let command =
                "stty rows 40 cols 100; TERM=xterm '\(HRMProcess.binary.path)' team mqtt://127.0.0.1:\(broker.port)"
            let team = try Child(
                "/usr/bin/script", ["-qefc", command, "/dev/null"],
                output: directory.appendingPathComponent("tty"))
            // Every retained message taken, and the table drawn again at least once after that.
            #expect(
                await eventually {
                    let text = team.text
                    return text.contains("… and 963 more straps")
                        && text.components(separatedBy: "more straps").count > 2
                })
            await team.stop()
            let text = team.text
            #expect(text.contains("the broker holds more than 1000 straps or hosts"), "\(text.suffix(2000))")
            #expect(text.contains("… and 963 more straps"), "\(text.suffix(2000))")
            // Every cursor-up of a redraw stays within the screen.
            let ups = text.split(separator: "\u{1B}[").compactMap { piece -> Int? in
                let digits = piece.prefix { $0.isNumber }
                return piece.dropFirst(digits.count).first == "A" ? Int(digits) : nil
            }
            #expect(!ups.isEmpty && ups.allSatisfy { $0 < 40 }, "\(ups.max() ?? -1)")
        }
    }
}
