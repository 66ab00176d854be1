import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// `hrm wach` names the nearest command (#26 item 13); commands and options are left alone.
@Suite struct CommandSuggestionTests {
    static let names = HRM.configuration.subcommands.compactMap { $0.configuration.commandName }

    @Test(arguments: [
        ("wach", "watch"), ("sesions", "sessions"), ("exprot", "export"), ("scna", "scan"),
        ("recrod", "record"), ("dec", "decode"), ("Watch", "watch"),
    ])
    func aSlipGetsTheNearestCommand(typed: String, meant: String) throws {
        let message = try #require(CommandSuggestion.unknown(typed, among: Self.names))
        #expect(message.hasPrefix("hrm: '\(typed)' is not a command; did you mean '\(meant)'?"), "\(message)")
        #expect(message.contains("hint: hrm --help lists the commands: scan, watch"))
    }

    @Test func farFromEveryCommandGetsNoGuess() throws {
        let message = try #require(CommandSuggestion.unknown("xyz", among: Self.names))
        #expect(!message.contains("did you mean"))
    }

    @Test func commandsOptionsAndHelpAreNotSlips() {
        for word in Self.names + ["--help", "-h", "--version", "help"] {
            #expect(CommandSuggestion.unknown(word, among: Self.names) == nil, "\(word)")
        }
    }

    @Test func theBinaryExitsWithAUsageError() async throws {
        let result = try await HRMProcess.run(["wach", "polar"])
        #expect(result.status == 64)
        #expect(
            result.stderr.hasPrefix("hrm: 'wach' is not a command; did you mean 'watch'?"), "\(result.stderr)"
        )
        #expect(result.stdout.isEmpty)
    }
}
