import Foundation
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// Issue #10, messages that mislead: what hrm says when something goes wrong must say what.
@Suite struct MessageBinaryTests {
    /// `hrm ... >&-`: the write fails (EBADF, or EINVAL once the runtime has put an epoll on
    /// descriptor 1), and the message said "errno 22".
    @Test func closedStdoutIsExplainedInWords() async throws {
        let hrm = HRMProcess.binary.path
        let result = try await HRMProcess.run(
            ["-c", "\(hrm) decode 0648 >&-"], executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 74)
        #expect(!result.stderr.contains("errno"), "\(result.stderr)")
        #expect(
            result.stderr.contains("hrm: cannot write to standard output: Invalid argument")
                || result.stderr.contains("hrm: cannot write to standard output: Bad file descriptor"),
            "\(result.stderr)")
        #expect(result.stderr.contains("hint: is standard output closed (>&-)?"))
    }

    @Test func errnoInWords() {
        #expect(Errno.text(EBADF) == "Bad file descriptor")
        #expect(Errno.text(ENOSPC) == "No space left on device")
    }
}
