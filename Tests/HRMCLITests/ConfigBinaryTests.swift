import Foundation
import Testing

/// The config file as users meet it: the built `hrm` under hrm-sim, with XDG_CONFIG_HOME in a
/// folder of the test's own (never the real home).
@Suite struct ConfigBinaryTests {
    /// A folder holding `hrm/config.toml` with `text`; remove it with `cleanUp`.
    struct Home {
        let directory: URL
        var environment: [String: String] { ["XDG_CONFIG_HOME": directory.path] }
        var file: String { directory.appendingPathComponent("hrm/config.toml").path }

        init(_ text: String?) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "hrm-config-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("hrm"), withIntermediateDirectories: true)
            if let text { try Data(text.utf8).write(to: URL(fileURLWithPath: file)) }
        }

        func cleanUp() { try? FileManager.default.removeItem(at: directory) }
    }

    static func devices(_ stdout: String) -> Set<String> {
        Set(
            WatchBinaryTests.lines(stdout).filter { $0["type"] as? String == "measurement" }
                .compactMap { $0["device"] as? String })
    }

    /// The file's device and format are used: TICKR (not the strongest strap) in JSON lines.
    @Test func theFilesDeviceAndFormatAreUsed() async throws {
        let home = try Home(
            """
            # defaults
            device = "TICKR"
            format = "json"
            """)
        defer { home.cleanUp() }
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--count", "2"], environment: home.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.devices(result.stdout) == ["C0:FF:EE:00:00:02"], "\(result.stdout)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    /// The command line overrides the file: DEVICE and --csv beat `device` and `format`.
    @Test func theCommandLineOverridesTheFile() async throws {
        let home = try Home("device = \"TICKR\"\nformat = \"json\"\n")
        defer { home.cleanUp() }
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--count", "2", "--csv", "HRM-Pro"], environment: home.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdoutLines
        #expect(lines.first?.hasPrefix("time,") == true, "\(result.stdout)")
        #expect(lines.dropFirst().allSatisfy { $0.contains("C0:FF:EE:00:00:01") }, "\(result.stdout)")
        #expect(lines.count == 3, "\(result.stdout)")
    }

    /// No file, or --no-config beside one, is hrm as it was: text lines from the strongest strap.
    @Test(arguments: [false, true]) func noFileIsTheDefaults(fileAndNoConfig: Bool) async throws {
        let home = try Home(fileAndNoConfig ? "device = \"TICKR\"\nformat = \"json\"\n" : nil)
        defer { home.cleanUp() }
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--count", "2"] + (fileAndNoConfig ? ["--no-config"] : []),
            environment: home.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("{"), "\(result.stdout)")
        #expect(result.stdout.contains("HRM-Pro"), "\(result.stdout)")
        #expect(!result.stdout.contains("TICKR"), "\(result.stdout)")
    }

    /// A bad value: exit 78, the file and line named, and not one call to bluetoothd.
    @Test(arguments: ["watch", "record", "scan", "reset-energy", "serve"])
    func aBadFileIs78NamingTheLine(command: String) async throws {
        let home = try Home("device = \"polar\"\n\nmax-hr = \"abc\"\n")
        defer { home.cleanUp() }
        let log = WatchBinaryTests.temporary("config-bad.jsonl")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let arguments = command == "reset-energy" ? [command, "polar"] : [command]
        let result = try await HRMProcess.runUnderSim(
            "basic", arguments, log: log, environment: home.environment)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        // scan and reset-energy take no max-hr, but a bad file is bad for every command.
        #expect(
            result.stderr.hasPrefix("hrm \(command): \(home.file):3: max-hr: expected a heart rate"),
            "\(result.stderr)")
        #expect(result.stderr.contains("--no-config"), "\(result.stderr)")
        let calls = try WatchBinaryTests.calls(log)
        #expect(calls.isEmpty, "\(calls)")
    }

    /// TOML that does not parse: the line and column toml++ gives.
    @Test func aSyntaxErrorNamesLineAndColumn() async throws {
        let home = try Home("format = \"json\"\nadapter = \"hci0\n")
        defer { home.cleanUp() }
        let result = try await HRMProcess.runUnderSim("basic", ["watch"], environment: home.environment)
        #expect(result.status == 78)
        #expect(result.stderr.hasPrefix("hrm watch: \(home.file):2:16: not valid TOML: "), "\(result.stderr)")
    }

    /// An unknown key is a warning naming its line (a typo is seen), and hrm goes on.
    @Test func anUnknownKeyIsAWarning() async throws {
        let home = try Home("format = \"json\"\ndevcie = \"TICKR\"\n")
        defer { home.cleanUp() }
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--count", "1"], environment: home.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "hrm watch: warning: \(home.file):2: unknown key 'devcie' (ignored); did you mean 'device'?"),
            "\(result.stderr)")
        #expect(Self.devices(result.stdout) == ["C0:FF:EE:00:00:01"], "\(result.stdout)")
    }

    /// A broker password in a file others can read is a warning with the fix; the owner's own
    /// file (mode 600), or one without a password, is not.
    @Test func aPasswordOthersCanReadIsAWarning() async throws {
        let home = try Home("[mqtt]\nurl = \"mqtt://me:secret@127.0.0.1:1\"\n")
        defer { home.cleanUp() }
        for (mode, readers) in [(0o644, "every user"), (0o640, "its group")] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: home.file)
            let shown = try await HRMProcess.run(["config"], environment: home.environment)
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(
                shown.stderr.contains(
                    "hrm config: warning: \(home.file): holds the MQTT broker's password and \(readers) can read it (mode \(String(mode, radix: 8))): chmod 600 \(home.file)"
                ), "\(shown.stderr)")
            #expect(!shown.stderr.contains("secret") && !shown.stdout.contains("secret"))
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: home.file)
        let own = try await HRMProcess.run(["config"], environment: home.environment)
        #expect(own.status == 0 && own.stderr.isEmpty, "\(own.stderr)")
        let open = try Home("[mqtt]\nurl = \"mqtt://127.0.0.1:1\"\n")
        defer { open.cleanUp() }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: open.file)
        let noPassword = try await HRMProcess.run(["config"], environment: open.environment)
        #expect(noPassword.status == 0 && noPassword.stderr.isEmpty, "\(noPassword.stderr)")
    }

    /// `power-on = true` in the file powers the adapter as --power-on does.
    @Test func powerOnFromTheFile() async throws {
        let home = try Home("power-on = true\n")
        defer { home.cleanUp() }
        let result = try await HRMProcess.runUnderSim(
            "adapter-off", ["scan", "--timeout", "1"], environment: home.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Polar H10 7E102030"))
    }

    /// --config FILE reads that file; one that is not there is 66.
    @Test func anotherFile() async throws {
        let home = try Home(nil)
        defer { home.cleanUp() }
        let other = home.directory.appendingPathComponent("other.toml").path
        try Data("devices = [\"TICKR\"]\n[hrv]\nevery = 0\n".utf8).write(to: URL(fileURLWithPath: other))
        let result = try await HRMProcess.runUnderSim(
            "two-straps", ["watch", "--count", "1", "--json", "--config", other],
            environment: home.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.devices(result.stdout) == ["C0:FF:EE:00:00:02"], "\(result.stdout)")
        let missing = try await HRMProcess.run(
            ["watch", "--config", other + ".nope"], environment: home.environment)
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("other.toml.nope: cannot read the config file"), "\(missing.stderr)")
    }

    /// --mqtt-… options still need a broker; without a file that is the usage error it was.
    @Test func mqttDetailsNeedABroker() async throws {
        let none = try Home(nil)
        defer { none.cleanUp() }
        let without = try await HRMProcess.run(["watch", "--mqtt-id", "desk"], environment: none.environment)
        #expect(without.status == 64)
        #expect(
            without.stderr.contains("Error: the --mqtt-… and --ha-… options need --mqtt URL"),
            "\(without.stderr)")
        let home = try Home("[mqtt]\nprefix = \"gym\"\n")
        defer { home.cleanUp() }
        let withFile = try await HRMProcess.run(
            ["watch", "--mqtt-id", "desk"], environment: home.environment)
        #expect(withFile.status == 64)
        #expect(
            withFile.stderr.contains("need --mqtt URL (or url in the config file's [mqtt])"),
            "\(withFile.stderr)")
    }

    /// hrm serve (hrm-serve) reads the file too: `[serve] listen` and the file's format.
    @Test func serveTakesListenFromTheFile() async throws {
        let home = try Home("format = \"json\"\n[serve]\nlisten = \"127.0.0.1:0\"\n")
        defer { home.cleanUp() }
        let result = try await HRMProcess.runUnderSim(
            "basic", ["serve", "--count", "2"], environment: home.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("listening on http://127.0.0.1:"), "\(result.stderr)")
        #expect(!result.stderr.contains("127.0.0.1:8757"), "\(result.stderr)")
        #expect(Self.devices(result.stdout) == ["D2:4B:7E:10:20:30"], "\(result.stdout)")
    }

    /// `hrm config` prints what hrm read, a password hidden; `--path` where the file is.
    @Test func configShowsTheSettings() async throws {
        let home = try Home(
            """
            max-hr = 190
            [mqtt]
            url = "mqtt://alice:s3cret@broker.example"
            """)
        defer { home.cleanUp() }
        let shown = try await HRMProcess.run(["config"], environment: home.environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(
            shown.stdoutLines == [
                "# \(home.file)", "max-hr = 190", "", "[mqtt]",
                "url = \"mqtt://alice:***@broker.example:1883\"  # password hidden",
            ], "\(shown.stdout)")
        #expect(!shown.stdout.contains("s3cret"))
        let path = try await HRMProcess.run(["config", "--path"], environment: home.environment)
        #expect(path.stdoutLines == [home.file])
        let none = try await HRMProcess.run(["config", "--no-config"], environment: home.environment)
        #expect(none.status == 0)
        #expect(none.stdout.hasPrefix("# no config file"))
    }
}
