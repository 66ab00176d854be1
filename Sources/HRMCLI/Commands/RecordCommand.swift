public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// `hrm record`: `hrm watch` that records the session into the sessions folder.
public struct RecordCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Watch a heart-rate monitor and record the session.",
        discussion: """
            The same as hrm watch (every option works as there), and the session is recorded to \
            $XDG_DATA_HOME/hrm/sessions/ (by default ~/.local/share/hrm/sessions/), in a new \
            file named by the start time and the strap's address; hrm prints its path at the \
            start and at the end. hrm sessions lists recordings, hrm hrv reads them.

            A recording keeps every notification's raw payload with a wall-clock time and a \
            monotonic offset, the drops and reconnects, battery changes and malformed frames, a \
            line each, written as it comes and saved to disk every 5 s and at the end: a crash \
            or a power cut loses at most the last few seconds. A disk that fails (or a file \
            name that is taken) ends the recording with an error; watching goes on.

            Exit status: as hrm watch; 73 when the sessions folder cannot be made or written; \
            74 when the recording failed during the run (it was not kept) and watching ended \
            well.
            """
    )

    @OptionGroup public var arguments: WatchArguments

    @OptionGroup(title: "Logging") public var log: LogOptions

    public init() {}

    public mutating func run() async throws {
        StandardOutput.prepare()
        try arguments.applyConfigFile(command: "record")
        guard let folder = SessionsFolder.fromEnvironment() else {
            StandardOutput.diagnostic(
                "hrm record: neither XDG_DATA_HOME nor HOME is set to an absolute path: use hrm watch --record PATH"
            )
            throw ExitCode(73)
        }
        let status = await WatchSession.run(
            arguments.options(command: "record", recording: .sessions(folder)))
        if status != 0 { throw ExitCode(status) }
    }
}
