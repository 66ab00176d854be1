import Foundation
import Testing

/// `hrm watch` against `hrm-sim --replay`: a recording played back as a strap.
@Suite struct ReplayBinaryTests {
    static let device = "D2:4B:7E:10:20:30"

    struct Frame {
        var bpm: Int
        var rr: Int
        /// A malformed payload (an `error` line) instead of a measurement.
        var malformed: String? = nil

        /// Flags 0x16: UINT8, contact detected, RR present.
        var hex: String {
            malformed ?? String(format: "16%02x%02x%02x", bpm, rr & 0xff, rr >> 8)
        }
    }

    /// A recording as `hrm watch --json` with mono_ms and hex would write it: frames `gap` ms
    /// apart, and with `dropAfter` a drop of 2.8 s, 0.2 s after that many frames.
    static func recording(_ frames: [Frame], gap: Double = 1000, dropAfter: Int? = nil) -> String {
        func line(_ mono: Double, _ type: String, _ rest: String) -> String {
            #"{"type":"\#(type)","time":"2026-11-23T15:42:01.125Z","mono_ms":\#(mono),"device":"\#(device)",\#(rest)}"#
        }
        var lines = [
            #"{"type":"recording","format":1,"hrm":"0.1.0","start":"2026-11-23T15:42:01.123Z","command":"watch"}"#,
            #"{"type":"status","time":"2026-11-23T15:42:01.125Z","mono_ms":2.1,"state":"scanning"}"#,
            line(7.4, "status", #""state":"connecting""#),
            line(347, "status", #""state":"connected""#),
            line(
                349.2, "info",
                #""name":"Replayed H10","location":"wrist","battery":55,"manufacturer":"Polar Electro Oy","model":"H10""#
            ),
        ]
        var mono = 1177.5
        for (index, frame) in frames.enumerated() {
            if index == dropAfter {
                lines.append(
                    line(mono - gap + 200, "status", #""state":"disconnected","detail":"link lost""#))
                lines.append(line(mono - gap + 201, "status", #""state":"reconnecting""#))
                lines.append(line(mono - gap + 3000, "status", #""state":"connected""#))
                mono += 3000
            }
            if frame.malformed != nil {
                lines.append(
                    line(mono, "error", #""code":"truncated_energy","message":"x","hex":"\#(frame.hex)""#))
            } else {
                lines.append(
                    line(
                        mono, "measurement",
                        #""bpm":\#(frame.bpm),"contact":"detected","energy_kj":null,"rr_1024":[\#(frame.rr)],"rr_ms":[\#(Double(frame.rr) * 1000 / 1024)],"format":"uint8","zone":null,"hex":"\#(frame.hex)""#
                    ))
            }
            mono += gap
        }
        lines.append(line(mono, "status", #""state":"stopped","detail":"\#(frames.count) measurements""#))
        return lines.joined(separator: "\n") + "\n"
    }

    static let frames = (0..<8).map { Frame(bpm: 64 + $0 * 3 % 7, rr: 900 - $0 * 11) }

    /// `hrm ARGUMENTS` under `hrm-sim --replay FILE SIM_OPTIONS`, the recording written to FILE.
    static func replay(
        _ recording: String, _ simOptions: [String] = [], _ arguments: [String]
    ) async throws -> HRMProcess.Result {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrm-replay-\(UUID().uuidString).jsonl")
        try recording.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await replay(file: file.path, simOptions, arguments)
    }

    static func replay(file: String, _ simOptions: [String] = [], _ arguments: [String]) async throws
        -> HRMProcess.Result
    {
        let sim = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-sim")
        return try await HRMProcess.run(
            ["--replay", file] + simOptions + ["--", HRMProcess.binary.path] + arguments, executable: sim)
    }

    static func measurements(_ result: HRMProcess.Result) -> [[String: Any]] {
        WatchBinaryTests.lines(result.stdout).filter { $0["type"] as? String == "measurement" }
    }

    @Test func watchPrintsTheRecordedMeasurements() async throws {
        var frames = Self.frames
        frames.insert(Frame(bpm: 0, rr: 0, malformed: "0e4801"), at: 3)
        let result = try await Self.replay(
            Self.recording(frames), ["--speed", "4"], ["watch", "--json", "--count", "8"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = WatchBinaryTests.lines(result.stdout)
        let info = try #require(events.first { $0["type"] as? String == "info" })
        #expect(info["device"] as? String == Self.device)
        #expect(info["name"] as? String == "Replayed H10")
        #expect(info["location"] as? String == "wrist")
        #expect(info["battery"] as? Int == 55)
        #expect(info["model"] as? String == "H10")
        let measurements = Self.measurements(result)
        #expect(measurements.compactMap { $0["bpm"] as? Int } == Self.frames.map(\.bpm))
        #expect(measurements.compactMap { ($0["rr_1024"] as? [Int])?.first } == Self.frames.map(\.rr))
        // The malformed payload is sent too, in its place.
        let stream = events.filter { ["measurement", "error"].contains($0["type"] as? String) }
        let error = try #require(stream.firstIndex { $0["type"] as? String == "error" })
        #expect(error == 3)
        #expect(stream[error]["hex"] as? String == "0e4801")
        #expect(stream[error]["code"] as? String == "truncated_energy")
    }

    /// --speed 10 divides the recording's times by 10 on hrm-sim's timeline (read back with
    /// --print-scenario: 8 frames 1 s apart become 0.1 s apart), and watch gets every frame of
    /// the faster replay. How long it takes in wall time is not checked: a loaded machine may
    /// stretch it (`make bench-*` measure time).
    @Test func speedPlaysFaster() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrm-replay-\(UUID().uuidString).jsonl")
        try Self.recording(Self.frames).write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let sim = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-sim")
        let printed = try await HRMProcess.run(
            ["--replay", file.path, "--speed", "10", "--print-scenario"], executable: sim)
        #expect(printed.status == 0, "\(printed.stderr)")
        let scenario = try #require(
            try JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as? [String: Any])
        let devices = try #require(scenario["devices"] as? [[String: Any]])
        let stream = try #require(devices.first?["heartRate"] as? [String: Any])
        let times = try #require(stream["times"] as? [Double])
        #expect(times.count == 8)
        for (index, time) in times.enumerated() {
            #expect(abs(time - Double(index) / 10) < 1e-9, "frame \(index) at \(time) s")
        }
        let result = try await Self.replay(
            file: file.path, ["--speed", "10"], ["watch", "--json", "--count", "8"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.measurements(result).compactMap { $0["bpm"] as? Int } == Self.frames.map(\.bpm))
    }

    @Test func theLinkDropsWhereTheRecordingsDid() async throws {
        let result = try await Self.replay(
            Self.recording(Self.frames, dropAfter: 5), [], ["watch", "--json", "--count", "8"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = WatchBinaryTests.lines(result.stdout)
        let states = events.compactMap { $0["state"] as? String }
        #expect(states.filter { $0 == "connected" }.count == 2, "\(states)")
        let disconnected = try #require(events.firstIndex { $0["state"] as? String == "disconnected" })
        #expect(events[..<disconnected].filter { $0["type"] as? String == "measurement" }.count == 5)
        let measurements = Self.measurements(result)
        #expect(measurements.compactMap { $0["bpm"] as? Int } == Self.frames.map(\.bpm))
        #expect(measurements.compactMap { ($0["rr_1024"] as? [Int])?.first } == Self.frames.map(\.rr))
        // The drop starts 0.2 s after the 5th frame, for 2.8 s; the 6th frame comes once the link
        // is back (4 s after the 5th, as recorded), and none is lost to the drop.
        let reconnected = try #require(events.lastIndex { $0["state"] as? String == "connected" })
        #expect(reconnected > disconnected)
        #expect(events[reconnected...].filter { $0["type"] as? String == "measurement" }.count == 3)
    }

    @Test func aTornLastLineIsIgnored() async throws {
        let torn = Self.recording(Self.frames) + #"{"type":"measurement","time":"2026-11-23T15:4"#
        let result = try await Self.replay(torn, ["--speed", "4"], ["watch", "--json", "--count", "8"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning"), "\(result.stderr)")
        #expect(Self.measurements(result).compactMap { $0["bpm"] as? Int } == Self.frames.map(\.bpm))
    }

    @Test(arguments: [
        #"{"type":"status","time":"2026-11-23T15:42:01.125Z","state":"scanning"}"#,
        #"{"type":"recording","format":2}"#, "not json at all",
    ])
    func aFileThatIsNotARecordingIsRefused(first: String) async throws {
        let text =
            first + "\n"
            + Self.recording(Self.frames).split(separator: "\n").dropFirst().joined(separator: "\n")
        let result = try await Self.replay(text, [], ["watch", "--json"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("recording"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func anUnreadableFileExits66() async throws {
        let result = try await Self.replay(file: "/nonexistent/session.jsonl", [], ["watch", "--json"])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("cannot read"), "\(result.stderr)")
    }

    @Test(arguments: [["--speed", "0"], ["--speed", "-2"], ["--speed", "inf"], ["--speed", "nan"]])
    func impossibleSpeedsAreUsageErrors(speed: [String]) async throws {
        let result = try await Self.replay(Self.recording(Self.frames), speed, ["watch", "--json"])
        #expect(result.status == 64, "\(result.stderr)")
    }
}
