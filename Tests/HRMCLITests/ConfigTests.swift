import ArgumentParser
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// The config file: reading (TOMLKit), checking with the line of each mistake, and merging under
/// the command line.
@Suite struct ConfigTests {
    static func parse(_ text: String) throws(ConfigError) -> (Configuration, [ConfigWarning]) {
        try ConfigFile.parse(Array(text.utf8), path: "config.toml")
    }

    static func failure(_ text: String) -> ConfigError? {
        do throws(ConfigError) {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyKey() throws {
        let (file, warnings) = try Self.parse(
            """
            # Defaults for hrm.
            devices = ["polar", "hci1/C0:FF:EE:00:00:01"]
            adapter = "hci0"
            power-on = true
            scan-timeout = "30s"
            format = "json"
            color = "never"
            max-hr = 190
            rest-hr = 50

            [hrv]
            every = 0
            window = 90.5

            [mqtt]
            url = "mqtts://alice:pw@broker.example"
            id = "desk"
            prefix = "gym"
            cafile = "/etc/ca.pem"
            ha-discovery = false
            ha-prefix = "ha"

            [serve]
            listen = ":9000"
            """)
        #expect(warnings.isEmpty)
        #expect(file.devices == ["polar", "hci1/C0:FF:EE:00:00:01"])
        #expect(file.adapter == "hci0")
        #expect(file.powerOn == true)
        #expect(file.scanTimeout?.value == 30)
        #expect(file.format == .json)
        #expect(file.color == .never)
        #expect(file.maxHR == 190 && file.restHR == 50 && file.zones == nil)
        #expect(file.hrv.every == 0 && file.hrv.window?.value == 90.5)
        #expect(
            file.mqtt
                == Configuration.MQTT(
                    url: "mqtts://alice:pw@broker.example", id: "desk", prefix: "gym", cafile: "/etc/ca.pem",
                    haDiscovery: false, haPrefix: "ha"))
        #expect(file.serve.listen == ":9000")
    }

    @Test func emptyFileIsNoSettings() throws {
        var expected = Configuration()
        expected.path = "config.toml"
        #expect(try Self.parse("").0 == expected)
        #expect(try Self.parse("# only a comment\n\n").0 == expected)
    }

    @Test func zonesAsArrayOrString() throws {
        #expect(try Self.parse("zones = [100, 120, 140]").0.zones == [100, 120, 140])
        #expect(try Self.parse("zones = \"100,120,140\"").0.zones == [100, 120, 140])
        #expect(try Self.parse("device = \"polar\"").0.devices == ["polar"])
        #expect(try Self.parse("mqtt = { url = \"mqtt://h\" }").0.mqtt.url == "mqtt://h")
        #expect(try Self.parse("mqtt.prefix = \"p\"").0.mqtt.prefix == "p")
    }

    /// Each mistake: its code, the line it is on, and what the message says.
    @Test(arguments: [
        (
            "max-hr = \"abc\"", ConfigError.Code.wrongType, 1,
            "max-hr: expected a heart rate from 25 to 250 bpm, found the string \"abc\""
        ),
        (
            "# x\nmax-hr = -5", .badValue, 2,
            "max-hr: expected a heart rate from 25 to 250 bpm, found the integer -5"
        ),
        ("max-hr = 180.5", .wrongType, 1, "found the number 180.5"),
        ("\n\nzones = [100, 90]", .badValue, 3, "zones: expected 1 to 10 increasing heart rates"),
        ("zones = [100, \"x\"]", .wrongType, 1, "found the array [100, \"x\"]"),
        ("zones = \"100,,120\"", .badValue, 1, "zones:"),
        ("max-hr = 190\nzones = [100]", .conflict, 2, "zones: give max-hr or zones, not both"),
        ("rest-hr = 60", .conflict, 1, "rest-hr: rest-hr needs max-hr"),
        ("max-hr = 150\n\nrest-hr = 160", .badValue, 3, "rest-hr: must be below max-hr (150)"),
        (
            "format = \"xml\"", .badValue, 1,
            "format: expected one of \"text\", \"json\", \"csv\", found the string \"xml\""
        ),
        ("color = true", .wrongType, 1, "color: expected one of \"auto\", \"always\", \"never\", found true"),
        ("power-on = \"yes\"", .wrongType, 1, "power-on: expected true or false"),
        ("scan-timeout = 0", .badValue, 1, "scan-timeout: expected a number of seconds"),
        ("scan-timeout = \"2h\"", .badValue, 1, "up to 3600 s"),
        ("scan-timeout = nan", .badValue, 1, "scan-timeout:"),
        ("scan-timeout = inf", .badValue, 1, "scan-timeout:"),
        ("adapter = \"\"", .badValue, 1, "adapter: expected an adapter's name"),
        ("device = \"\"", .badValue, 1, "device:"),
        ("devices = [\"a\", \"A\", \"a\"]", .badValue, 1, "devices: 'a' is given twice"),
        ("devices = []", .wrongType, 1, "devices:"),
        ("device = \"a\"\ndevices = [\"b\"]", .conflict, 2, "give device or devices, not both"),
        (
            "[hrv]\nwindow = 5", .badValue, 2,
            "hrv.window: expected a number of seconds or a string with units (\"30s\", \"2m\"), from 10 to 3600 s, found the integer 5"
        ),
        ("[hrv]\n\nevery = -1", .badValue, 3, "hrv.every:"),
        ("hrv = 5", .wrongType, 1, "hrv: expected a table ([hrv]), found the integer 5"),
        ("[mqtt]\nurl = \"http://x\"", .badValue, 2, "mqtt.url:"),
        ("[mqtt]\nprefix = \"a/b\"", .badValue, 2, "mqtt.prefix: 'a/b' must not contain /, + or #"),
        ("mqtt = { url = 5 }", .wrongType, 1, "mqtt.url:"),
        ("[serve]\nlisten = \"nope\"", .badValue, 2, "serve.listen: expected HOST:PORT"),
        ("[serve]\nallow-host = \"a/b\"", .badValue, 2, "serve.allow-host: expected a host name"),
        ("[serve]\nallow-host = [1]", .wrongType, 2, "serve.allow-host: expected a host name"),
        ("when = 2024-01-01\nformat = 1979-05-27", .wrongType, 2, "found a date or time"),
    ])
    func mistakesNameTheirLine(text: String, code: ConfigError.Code, line: Int, message: String) throws {
        let error = try #require(Self.failure(text))
        #expect(error.code == code)
        #expect(error.line == line, "\(error)")
        #expect(error.message.contains(message), "\(error.message)")
        #expect(error.exitStatus == 78)
        #expect(error.description.hasPrefix("config.toml:\(line): "))
    }

    /// TOML that does not parse: toml++'s line and column.
    @Test(arguments: [
        ("a = 1\nb = \"x\nc = 2", 2, 7),
        ("format = \"json\"\nformat = \"csv\"", 2, 1),
        ("[mqtt]\nurl = \"a\"\n[mqtt]\n", 3, 1),
        ("max-hr = 99999999999999999999", 1, 30),
        ("a = [\n1,\n2", 3, 2),
    ])
    func syntaxErrors(text: String, line: Int, column: Int) throws {
        let error = try #require(Self.failure(text))
        #expect(error.code == .syntax)
        #expect(error.line == line, "\(error)")
        #expect(error.column != nil)
        #expect(error.message.hasPrefix("not valid TOML: "), "\(error.message)")
        #expect(error.description.hasPrefix("config.toml:\(line):"), "\(error)")
        _ = column  // toml++ decides the column; the line is what people look for.
    }

    /// NUL (raw or escaped) and bytes that are not UTF-8: TOMLKit would cut the text (or a key)
    /// there, or trap; they are refused with their line first.
    @Test func notText() throws {
        for (bytes, line) in [
            (Array("a = 1\nb = \"x\0\"\n".utf8), 2),
            (Array("a = 1\n\n\"k\\u0000\" = 1\n".utf8), 3),
            (Array("a = \"\\U00000000\"".utf8), 1),
            (Array("a = 1\n".utf8) + [0xFF, 0xFE], 2),
        ] {
            do throws(ConfigError) {
                _ = try ConfigFile.parse(bytes, path: "c.toml")
                Issue.record("accepted \(bytes)")
            } catch {
                #expect(error.code == .notText)
                #expect(error.line == line, "\(error)")
            }
        }
    }

    @Test func unknownKeysAreWarningsWithTheirLine() throws {
        let (file, warnings) = try Self.parse(
            """
            format = "csv"
            devcie = "polar"
            [mqtt]
            prefx = "gym"
            [future]
            thing = 1
            """)
        #expect(file.format == .csv)
        #expect(
            warnings.map(\.description) == [
                "config.toml:2: unknown key 'devcie' (ignored); did you mean 'device'?",
                "config.toml:4: unknown key 'mqtt.prefx' (ignored); did you mean 'mqtt.prefix'?",
                "config.toml:5: unknown key 'future' (ignored)",
            ])
    }

    /// toml++ gives each key's line, however the key is written.
    @Test func keyLines() throws {
        let text = #"""
            # comment = 1
            format = "csv" # max-hr = 2
            "devices" = [
              "a",
              "b = 3",
            ]
            adapter = """
            max-hr = 5
            """
            [mqtt]
            url = "mqtt://h"

            prefix = 7
            """#
        let error = try #require(Self.failure(text))
        #expect(error.line == 13, "\(error)")
        #expect(error.message.hasPrefix("mqtt.prefix:"), "\(error)")
        #expect(try #require(Self.failure("serve.listen = 5")).line == 1)
        #expect(try #require(Self.failure("serve = { listen = 5 }")).line == 1)
        #expect(try #require(Self.failure("a = 1\n\"max-hr\" = 1")).line == 2)
    }

    @Test func defaultPathFollowsXDG() {
        #expect(
            ConfigFile.defaultPath(environment: ["XDG_CONFIG_HOME": "/c", "HOME": "/h"])
                == "/c/hrm/config.toml")
        #expect(
            ConfigFile.defaultPath(environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/h"])
                == "/h/.config/hrm/config.toml")
        #expect(ConfigFile.defaultPath(environment: ["HOME": "/h"]) == "/h/.config/hrm/config.toml")
        #expect(ConfigFile.defaultPath(environment: [:]) == nil)
    }

    /// What `hrm config` prints reads back as the same settings.
    @Test func renderingReadsBack() throws {
        let text = """
            devices = ["a \\"b\\"", "c"]
            power-on = false
            scan-timeout = 2.5
            zones = [100, 120]
            [hrv]
            every = 7.5
            window = "1m"
            [mqtt]
            url = "mqtt://h:1884"
            ha-discovery = true
            [serve]
            listen = "[::1]:80"
            allow-host = ["studio.lan", "10.0.0.2"]
            """
        let (file, _) = try Self.parse(text)
        let rendered = ConfigRendering.toml(file).joined(separator: "\n")
        #expect(try Self.parse(rendered).0 == file, "\(rendered)")
        #expect(ConfigRendering.quoted("a\u{1}\"\\") == #""a\u0001\"\\""#)
    }

    // MARK: - Merging under the command line

    static func watch(_ arguments: [String], file text: String) throws -> WatchArguments {
        var parsed = try #require(try HRM.parseAsRoot(["watch"] + arguments) as? WatchCommand).arguments
        parsed.fill(from: try parse(text).0)
        return parsed
    }

    static let file = """
        device = "polar"
        adapter = "hci1"
        scan-timeout = 20
        format = "json"
        color = "always"
        max-hr = 190
        rest-hr = 50
        [hrv]
        every = 10
        window = 120
        [mqtt]
        url = "mqtt://broker"
        prefix = "gym"
        ha-discovery = false
        """

    @Test func theFileFillsWhatTheCommandLineLeftOut() throws {
        let merged = try Self.watch([], file: Self.file)
        let options = merged.options(command: "watch", recording: nil)
        #expect(options.straps == [StrapRequest(wanted: "polar")])
        #expect(options.bluetooth.adapter == "hci1")
        #expect(options.scanTimeout.value == 20)
        #expect(options.format == .json)
        #expect(options.colour == .always)
        #expect(options.zones == HeartRateZones(maximum: 190, rest: 50))
        #expect(options.hrv == HRVTracker.Settings(every: 10, window: 120, correcting: true))
        #expect(options.mqtt?.topics.prefix == "gym")
        #expect(options.mqtt?.discoveryPrefix == nil)
        #expect(options.mqtt?.url.host == "broker")
    }

    @Test func theCommandLineWins() throws {
        let merged = try Self.watch(
            [
                "wahoo", "--adapter", "hci0", "--scan-timeout", "5", "--csv", "--color", "never", "--zones",
                "100,150", "--hrv-every", "0", "--mqtt", "mqtt://other", "--mqtt-prefix", "home",
            ], file: Self.file)
        let options = merged.options(command: "watch", recording: nil)
        #expect(options.straps == [StrapRequest(wanted: "wahoo")])
        #expect(options.bluetooth.adapter == "hci0")
        #expect(options.scanTimeout.value == 5)
        #expect(options.format == .csv)
        #expect(options.colour == .never)
        // The zones come whole from the command line: no max-hr from the file beside --zones.
        #expect(options.zones == HeartRateZones(lowerBounds: [100, 150]))
        #expect(options.hrv == HRVTracker.Settings(every: nil, window: 120, correcting: true))
        #expect(options.mqtt?.url.host == "other")
        #expect(options.mqtt?.topics.prefix == "home")
    }

    @Test func groupsComeWholeFromOnePlace() throws {
        // --max-hr alone: the file's rest-hr is not mixed in.
        #expect(
            try Self.watch(["--max-hr", "200"], file: Self.file).zones.chosen == HeartRateZones(maximum: 200))
        // --all: every strap, not the file's device.
        #expect(try Self.watch(["--all"], file: Self.file).devices.isEmpty)
        // --json beside the file's format = "csv": JSON, no conflict.
        #expect(try Self.watch(["--json"], file: "format = \"csv\"").output.chosen == .json)
    }

    @Test func withoutAFileNothingChanges() throws {
        let plain = try #require(try HRM.parseAsRoot(["watch"]) as? WatchCommand).arguments
        var merged = plain
        merged.fill(from: Configuration())
        let before = plain.options(command: "watch", recording: nil)
        let after = merged.options(command: "watch", recording: nil)
        #expect(after.straps == before.straps && after.format == before.format && after.colour == .auto)
        #expect(after.scanTimeout == before.scanTimeout && after.scanTimeout.value == 10)
        #expect(after.hrv == HRVTracker.Settings(every: 5, window: 60, correcting: true))
        #expect(
            after.zones == nil && after.mqtt == nil && after.outputs.isEmpty && after.bluetooth.adapter == nil
        )
    }

    @Test func otherCommands() throws {
        var scan = try #require(try HRM.parseAsRoot(["scan"]) as? ScanCommand)
        scan.output.fill(from: try Self.parse("format = \"csv\"\npower-on = true").0)
        scan.bluetooth.fill(from: try Self.parse("power-on = true").0)
        #expect(scan.output.chosen == .csv && scan.bluetooth.powerOn)
        var serve = try ServeArguments.parse([])
        serve.fill(from: try Self.parse("[serve]\nlisten = \":9\"").0)
        #expect(serve.address == ListenAddress(host: "0.0.0.0", port: 9))
        serve.fill(from: try Self.parse("[serve]\nallow-host = [\"studio.lan\", \"::1\"]").0)
        #expect(serve.allowHost == ["studio.lan", "::1"])
        var given = try ServeArguments.parse(["--allow-host", "given.lan"])
        given.fill(from: try Self.parse("[serve]\nallow-host = \"studio.lan\"").0)
        #expect(given.allowHost == ["given.lan"], "the command line wins")
        #expect(throws: (any Error).self) { try HRM.parseAsRoot(["watch", "--config", "x", "--no-config"]) }
        let noConfig = try #require(try HRM.parseAsRoot(["config", "--no-config"]) as? ConfigCommand)
        #expect(noConfig.configFile.path == nil)
    }
}

extension WatchOptions {
    /// The MQTT output's settings, when the options ask for one.
    fileprivate var mqtt: MQTTSettings? {
        outputs.lazy.compactMap { $0 as? MQTTOutput }.first?.settings
    }

    /// The display's format, when the display is stdout's.
    fileprivate var format: OutputFormat? { (display as? StdoutOutput)?.format }

    /// The display's colour choice, when the display is stdout's.
    fileprivate var colour: ColorChoice? { (display as? StdoutOutput)?.colour }
}
