/// hrm's version: `hrm --version`, and the `hrm` field of a recording's first line.
package enum HRMVersion {
    /// The version of this build.
    package static let current = "0.1.0"
}
