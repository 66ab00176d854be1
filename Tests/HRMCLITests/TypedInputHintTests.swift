import Foundation
import Testing

/// `hrm hrv` and `hrm decode` with nothing to read but a terminal say that they wait for what is
/// typed, and how to end it (#26 item 9); from a pipe they say nothing.
@Suite struct TypedInputHintTests {
    /// `hrm ARGUMENTS` on a pty (util-linux `script`) that receives `typed`, then Ctrl-D.
    static func typed(_ arguments: String, _ typed: String) async throws -> String? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            Issue.record("/usr/bin/script is not installed (Debian's bsdutils, an essential package)")
            return nil
        }
        let result = try await HRMProcess.run(
            ["-qefc", "'\(HRMProcess.binary.path)' \(arguments)", "/dev/null"], stdin: typed + "\u{4}",
            executable: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test func hrvSaysItReadsWhatIsTyped() async throws {
        guard let text = try await Self.typed("hrv", "810\n830\n800\n") else { return }
        #expect(
            text.contains("hrm hrv: reading RR intervals from standard input"), "\(text.debugDescription)")
        #expect(text.contains("Ctrl-D ends"))
        #expect(text.contains("3 RR intervals"), "\(text.debugDescription)")
        let piped = try await HRMProcess.run(["hrv"], stdin: "810\n830\n800\n")
        #expect(piped.status == 0)
        #expect(!piped.stderr.contains("reading RR intervals"), "\(piped.stderr)")
    }

    @Test func decodeSaysItReadsWhatIsTyped() async throws {
        guard let text = try await Self.typed("decode", "0648\n") else { return }
        #expect(text.contains("hrm decode: reading payloads from standard input"), "\(text.debugDescription)")
        #expect(text.contains("72 bpm"), "\(text.debugDescription)")
        let piped = try await HRMProcess.run(["decode"], stdin: "0648\n")
        #expect(piped.status == 0)
        #expect(!piped.stderr.contains("reading payloads"), "\(piped.stderr)")
    }
}
