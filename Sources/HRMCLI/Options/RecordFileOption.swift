public import ArgumentParser
import SessionLibrary

/// `--record PATH` on `watch` and `relay`: the session recorded to a new file beside what they
/// show (`hrm record` takes its file or the sessions folder its own way).
public struct RecordFileOption: ParsableArguments, Sendable {
    @Option(
        help: ArgumentHelp(
            "Record the session to this new file (JSON lines with the raw notifications; see hrm record).",
            valueName: "path"))
    public var record: String?

    public init() {}

    /// The recording asked for, if any.
    var recording: RecordingChoice? { record.map { .file($0) } }
}
