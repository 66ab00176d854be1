import Testing

/// True when nothing is `missing`; else the test fails, saying what is missing (`.ci/run` installs
/// every tool the tests run: its absence is a failure, never a silent pass).
func requireTools(_ missing: String?, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    guard let missing else { return true }
    Issue.record(Comment(rawValue: missing), sourceLocation: sourceLocation)
    return false
}
