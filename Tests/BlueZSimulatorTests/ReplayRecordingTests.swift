import BlueZSimulator
import Foundation
import Testing

/// A recording of `hrm watch` as the scenario that plays it back.
@Suite struct ReplayRecordingTests {
    static let header =
        #"{"type":"recording","format":1,"hrm":"0.1.0","start":"2026-11-23T15:42:01.123Z","command":"watch"}"#
    static let device = "D2:4B:7E:10:20:30"

    static func line(_ mono: Double, _ rest: String) -> String {
        #"{"type":"\#(rest.split(separator: "|")[0])","time":"2026-11-23T15:42:01.125Z","mono_ms":\#(mono),"device":"\#(device)"\#(rest.split(separator: "|").dropFirst().first.map { "," + $0 } ?? "")}"#
    }

    /// Connected, info, three measurements, a malformed frame, a drop of 2.8 s (1.2 s after the
    /// 4th frame), two more measurements, stopped.
    static let recording =
        [
            header,
            #"{"type":"status","time":"2026-11-23T15:42:01.125Z","mono_ms":2.1,"state":"scanning"}"#,
            line(347, #"status|"state":"connected""#),
            line(
                349.2,
                #"info|"name":"Replay <H10>","location":"wrist","battery":55,"manufacturer":"Polar Electro Oy","model":"H10""#
            ),
            line(1177.5, #"measurement|"bpm":71,"rr_1024":[872],"hex":"16476803""#),
            line(2177.5, #"measurement|"bpm":72,"rr_1024":[875],"hex":"16486b03""#),
            line(2300, #"battery|"percent":54"#),
            line(3177.5, #"measurement|"bpm":73,"rr_1024":[878],"hex":"16496e03""#),
            line(3500, #"error|"code":"truncated_energy","hex":"0E4801""#),
            line(4700, #"status|"state":"disconnected","detail":"link lost""#),
            line(4701, #"status|"state":"reconnecting""#),
            line(5000, #"status|"state":"disconnected""#),
            line(7500, #"status|"state":"connected""#),
            line(8300, #"measurement|"bpm":74,"rr_1024":[881],"hex":"164a7103""#),
            line(9300, #"measurement|"bpm":75,"rr_1024":[884],"hex":"164b7403""#),
            line(9400, #"status|"state":"stopped","detail":"5 measurements""#),
        ].joined(separator: "\n") + "\n"

    @Test func theStrapIsTheRecordedOne() throws {
        let replay = try Recording.replay(Self.recording, name: "fixture")
        #expect(replay.warnings.isEmpty)
        let strap = try #require(replay.scenario.devices.first)
        #expect(replay.scenario.devices.count == 1)
        #expect(strap.address == Self.device)
        #expect(strap.name == "Replay <H10>")
        #expect(strap.location == 2)
        #expect(strap.battery == 55)
        #expect(strap.deviceInformation?.manufacturer == "Polar Electro Oy")
        #expect(strap.deviceInformation?.model == "H10")
        #expect(strap.heartRate.mode == .replay)
        // Every payload, malformed ones too, lower case.
        #expect(
            strap.heartRate.frames == ["16476803", "16486b03", "16496e03", "0e4801", "164a7103", "164b7403"])
        #expect(strap.heartRate.times == [0, 1, 2, 2.3225, 7.1225, 8.1225])
        // The first frame as long after `connected` as recorded.
        #expect(abs(strap.heartRate.interval - 0.8305) < 1e-9)
        // From the first disconnected to the next connected, 1.2 s after the 4th frame.
        #expect(strap.drops.count == 1)
        #expect(strap.drops.first?.afterNotifications == 4)
        #expect(abs((strap.drops.first?.delay ?? 0) - 1.2) < 1e-9)
        #expect(abs((strap.drops.first?.for ?? 0) - 2.8) < 1e-9)
        #expect(
            replay.scenario.events == [.battery(.afterNotifications(2), device: Self.device, percent: 54)])
        try replay.scenario.validate()
    }

    @Test func speedDividesEveryTime() throws {
        let strap = try #require(try Recording.replay(Self.recording, speed: 10).scenario.devices.first)
        #expect(
            zip(strap.heartRate.times, [0, 0.1, 0.2, 0.23225, 0.71225, 0.81225]).allSatisfy {
                abs($0 - $1) < 1e-9
            })
        #expect(abs((strap.drops.first?.delay ?? 0) - 0.12) < 1e-9)
        #expect(abs((strap.drops.first?.for ?? 0) - 0.28) < 1e-9)
        #expect(strap.heartRate.interval == 0.1)
    }

    @Test(arguments: [0, -1, Double.infinity, Double.nan]) func impossibleSpeedsAreRefused(speed: Double) {
        #expect(throws: Recording.LoadError.self) { try Recording.replay(Self.recording, speed: speed) }
    }

    @Test func aTornLastLineIsAWarning() throws {
        let torn = Self.recording + #"{"type":"measurement","time":"2026-11-23T15:42:11.1"#
        let replay = try Recording.replay(torn)
        #expect(replay.warnings.count == 1)
        #expect(replay.warnings.first?.contains("line 17") == true, "\(replay.warnings)")
        #expect(replay.scenario.devices.first?.heartRate.frames.count == 6)
    }

    @Test func aBadLineInTheMiddleIsAnError() {
        var lines = Self.recording.split(separator: "\n").map(String.init)
        lines[5] = String(lines[5].prefix(30))
        #expect {
            try Recording.replay(lines.joined(separator: "\n"))
        } throws: { error in
            "\(error)".contains("line 6")
        }
    }

    @Test(arguments: [
        "", "\n\n", #"{"type":"status","state":"scanning"}"#, "16476803",
        #"{"type":"recording","format":2}"# + "\n" + #"{"type":"status","mono_ms":1,"state":"scanning"}"#,
        #"{"type":"recording","format":"1"}"#,
    ])
    func notARecordingIsRefused(text: String) {
        #expect {
            try Recording.replay(text)
        } throws: { error in
            guard case .invalid = error as? Recording.LoadError else { return false }
            return true
        }
    }

    @Test func aRecordingWithoutPayloadsIsRefused() {
        let text = [Self.header, Self.line(347, #"status|"state":"connected""#)].joined(separator: "\n")
        #expect(throws: Recording.LoadError.self) { try Recording.replay(text) }
    }

    @Test func aMeasurementWithoutHexIsRefused() {
        let text = [Self.header, Self.line(347, #"measurement|"bpm":71"#)].joined(separator: "\n")
        #expect {
            try Recording.replay(text)
        } throws: { error in
            "\(error)".contains("line 2") && "\(error)".contains("hex")
        }
    }

    @Test func anUnreadableFileIsNotAnInvalidOne() {
        #expect {
            try Recording.load(path: "/nonexistent/hrm-recording.jsonl")
        } throws: { error in
            guard case .unreadable = error as? Recording.LoadError else { return false }
            return true
        }
    }

    @Test func linesOfASecondDeviceAreIgnored() throws {
        let other =
            #"{"type":"measurement","time":"t","mono_ms":9450,"device":"C0:FF:EE:00:00:01","hex":"1650"}"#
        let replay = try Recording.replay(
            Self.recording + other + "\n" + Self.line(9460, #"status|"state":"stopped""#))
        #expect(replay.scenario.devices.first?.heartRate.frames.count == 6)
        #expect(replay.warnings.count == 1)
    }

    /// The scenario is a plain one: it survives JSON, so `--scenario` can play what
    /// `--print-scenario` wrote.
    @Test func theScenarioRoundTripsThroughJSON() throws {
        let scenario = try Recording.replay(Self.recording).scenario
        let decoded = try JSONDecoder().decode(Scenario.self, from: try JSONEncoder().encode(scenario))
        #expect(decoded == scenario)
    }

    @Test func replayStreamsAreValidated() {
        var scenario = Scenario()
        var device = Scenario.Device(address: Self.device)
        device.heartRate.mode = .replay
        device.heartRate.frames = ["1650", "1651", "zz"]
        device.heartRate.times = [0, 2, 1]
        scenario.devices = [device]
        #expect {
            try scenario.validate()
        } throws: { error in
            let text = "\(error)"
            return text.contains("frames[2]") && text.contains("times[2]")
        }
        scenario.devices[0].heartRate.times = [0, 1]
        #expect { try scenario.validate() } throws: { "\($0)".contains("one per frame") }
        scenario.devices[0].heartRate.mode = .frames
        scenario.devices[0].heartRate.frames = ["1650", "1651"]
        #expect { try scenario.validate() } throws: { "\($0)".contains("only for mode 'replay'") }
        scenario.devices[0].heartRate.times = []
        scenario.devices[0].drops = [Scenario.Drop(at: 1, for: 1)]
        scenario.devices[0].drops[0].delay = 1
        #expect { try scenario.validate() } throws: {
            "\($0)".contains("delay: only with afterNotifications")
        }
    }

    @Test func theGeneratorPlaysEachFrameOnce() {
        var generator = HeartRateGenerator(source: .replay([[0x16, 0x50], [0x16, 0x51]]))
        #expect(generator.nextReplayIndex == 0)
        #expect(generator.next(at: 1) == [0x16, 0x50])
        #expect(generator.nextReplayIndex == 1)
        #expect(generator.next(at: 2) == [0x16, 0x51])
        #expect(generator.nextReplayIndex == nil)
        #expect(generator.next(at: 3) == [])
    }
}
