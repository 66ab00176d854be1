/// What `--relay` (and `hrm relay`) asked for.
package struct RelaySettings: Sendable, Equatable {
    /// `--relay-adapter`: the adapter to serve on; nil for the strap's (the session's choice).
    package var adapter: String?
    /// `--relay-name`: the advertised name; nil for "hrm" and the strap's name once known.
    package var name: String?

    /// Every stored property, as given.
    package init(adapter: String? = nil, name: String? = nil) {
        self.adapter = adapter
        self.name = name
    }

    /// The advertised name before the strap's is known, and without one; then this, a space and
    /// the strap's name (cut to fit).
    package static let defaultName = "hrm"
}
