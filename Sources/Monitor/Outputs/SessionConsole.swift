/// Where a session says what is for people rather than for the event stream: a failure before
/// anything started, a hint after a failure, an output's failure told again at the end. hrm's
/// command line writes these on stderr (and the failure before the start as an `error` line in
/// JSON output); a program that embeds the session shows them as it sees fit.
package protocol SessionConsole: Sendable {
    /// An output could not be opened: nothing started, and the session ends with its status.
    func failedBeforeStart(_ failure: OutputFailure)
    /// A line (or a few joined with "\n") for people.
    func say(_ text: String)
}

/// A console that keeps quiet: the default for a session nobody reads.
package struct SilentConsole: SessionConsole {
    /// A console that keeps quiet.
    package init() {}

    /// Nothing.
    package func failedBeforeStart(_ failure: OutputFailure) {}
    /// Nothing.
    package func say(_ text: String) {}
}
