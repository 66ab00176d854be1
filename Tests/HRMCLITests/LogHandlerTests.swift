import Logging
import Synchronization
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// The log handler's lines and the choice of level (`-v`, `HRM_LOG`), in process.
@Suite struct LogHandlerTests {
    /// What a handler wrote, line by line.
    final class Captured: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func logger(_ label: String, _ level: Logger.Level) -> Logger {
            Logger(label: label) { label in
                StderrLogHandler(label: label, level: level) { line in self.lines.withLock { $0.append(line) }
                }
            }
        }
    }

    @Test func aLineHasTimeLevelLabelMessageAndSortedMetadata() {
        let line = StderrLogHandler.line(
            time: Timestamp(millisecondsSinceEpoch: 1_795_000_000_123), level: .debug, label: "dbus",
            message: "call org.bluez.Device1.Connect()",
            metadata: ["path": "/org/bluez/hci0/dev_X", "call": "12", "timeout": "20s"])
        #expect(
            line
                == "2026-11-18T11:06:40.123Z debug dbus: call org.bluez.Device1.Connect() call=12 path=/org/bluez/hci0/dev_X timeout=20s"
        )
    }

    @Test func valuesWithSpacesOrQuotesAreQuoted() {
        #expect(StderrLogHandler.quotedIfNeeded("hci0") == "hci0")
        #expect(StderrLogHandler.quotedIfNeeded("hci0 (powered)") == #""hci0 (powered)""#)
        #expect(StderrLogHandler.quotedIfNeeded(#"{"a": 1}"#) == #""{\"a\": 1}""#)
        #expect(StderrLogHandler.quotedIfNeeded("a=b") == #""a=b""#)
        #expect(StderrLogHandler.quotedIfNeeded("") == #""""#)
    }

    @Test func theHandlerKeepsToItsLevelAndMergesMetadata() {
        let captured = Captured()
        var logger = captured.logger("watch", .debug)
        logger[metadataKey: "strap"] = "D2:4B"
        logger.trace("not this one")
        logger.debug("connecting", metadata: ["attempt": "2", "strap": "C0:FF"])
        logger.info("connected")
        let lines = captured.all
        try? #require(lines.count == 2)
        #expect(lines.first?.hasSuffix(" debug watch: connecting attempt=2 strap=C0:FF") == true, "\(lines)")
        #expect(lines.last?.hasSuffix(" info watch: connected strap=D2:4B") == true, "\(lines)")
        #expect(lines.first.map(LoggingBinaryTests.isLogLine) == true)
    }

    /// The libraries log nothing when not given a logger, and the process's loggers log nothing
    /// before `HRMLog.start` chose a level (in-process tests never start it).
    @Test func nothingIsLoggedWithoutALevel() {
        #expect(HRMLog.watch.logLevel == .critical)
        #expect(HRMLog.handler("x") is SwiftLogNoOpLogHandler)
    }

    @Test func theFlagWinsThenHRMLog() {
        #expect(HRMLog.choose(verbosity: 0, environment: nil) == (nil, nil))
        #expect(HRMLog.choose(verbosity: 1, environment: nil).0 == .debug)
        #expect(HRMLog.choose(verbosity: 2, environment: nil).0 == .trace)
        #expect(HRMLog.choose(verbosity: 5, environment: nil).0 == .trace)
        #expect(HRMLog.choose(verbosity: 1, environment: "trace").0 == .debug)
        #expect(HRMLog.choose(verbosity: 0, environment: "trace").0 == .trace)
        #expect(HRMLog.choose(verbosity: 0, environment: "Warning").0 == .warning)
        #expect(HRMLog.choose(verbosity: 0, environment: "off") == (nil, nil))
        let (level, warning) = HRMLog.choose(verbosity: 0, environment: "verbose")
        #expect(level == nil)
        #expect(
            warning?.contains("HRM_LOG=verbose is not a log level (trace, debug,") == true, "\(warning ?? "")"
        )
        // A hostile value is shown escaped, not passed to the terminal.
        let (_, hostile) = HRMLog.choose(verbosity: 0, environment: "\u{1B}[2Jx")
        #expect(hostile?.contains("\u{1B}") == false)
        // The flag needs no valid HRM_LOG.
        #expect(HRMLog.choose(verbosity: 1, environment: "bogus") == (.debug, nil))
    }

    @Test func levelNames() {
        for level in Logger.Level.allCases { #expect(HRMLog.parse(level.rawValue) == .level(level)) }
        #expect(HRMLog.parse("DEBUG") == .level(.debug))
        #expect(HRMLog.parse("off") == .off)
        for bad in ["", "2", "verbose", "debug ", "warn"] { #expect(HRMLog.parse(bad) == nil, "\(bad)") }
    }

    @Test func verboseCountsOnTheCommandsThatTouchTheBus() throws {
        #expect(try WatchCommand.parse([]).log.verbose == 0)
        #expect(try WatchCommand.parse(["-v"]).log.verbose == 1)
        #expect(try WatchCommand.parse(["-vv"]).log.verbose == 2)
        #expect(try RecordCommand.parse(["--verbose", "--verbose"]).log.verbose == 2)
        #expect(try ScanCommand.parse(["-v"]).log.verbose == 1)
        #expect(try ResetEnergyCommand.parse(["Polar", "-v"]).log.verbose == 1)
        #expect(try ServeCommand.parse(["-v"]).serve.verbose)
        #expect(try !ServeCommand.parse([]).serve.verbose)
        #expect(throws: (any Error).self) { try DecodeCommand.parse(["0648", "-v"]) }
        // And `-v` reaches the logging of each (relay's once did not: it logged nothing).
        #expect(LogOptions.of(try WatchCommand.parse(["-v"]))?.verbose == 1)
        #expect(LogOptions.of(try RecordCommand.parse(["-v"]))?.verbose == 1)
        #expect(LogOptions.of(try ScanCommand.parse(["-v"]))?.verbose == 1)
        #expect(LogOptions.of(try ResetEnergyCommand.parse(["Polar", "-v"]))?.verbose == 1)
        #expect(LogOptions.of(try RelayCommand.parse(["-v"]))?.verbose == 1)
    }
}
