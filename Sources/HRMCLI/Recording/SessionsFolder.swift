#if canImport(Glibc)
    import Glibc
#endif

/// Where `hrm record` keeps recordings and `hrm sessions` finds them:
/// `$XDG_DATA_HOME/hrm/sessions/`, by default `~/.local/share/hrm/sessions/`.
struct SessionsFolder: Sendable {
    let path: String

    /// The folder from the environment; nil when neither XDG_DATA_HOME nor HOME says where.
    static func fromEnvironment() -> SessionsFolder? {
        func variable(_ name: String) -> String? {
            guard let value = getenv(name) else { return nil }
            let text = String(cString: value)
            // The XDG rule: a relative path is invalid and ignored.
            return text.hasPrefix("/") ? text : nil
        }
        if let data = variable("XDG_DATA_HOME") { return SessionsFolder(path: data + "/hrm/sessions") }
        if let home = variable("HOME") { return SessionsFolder(path: home + "/.local/share/hrm/sessions") }
        return nil
    }

    /// Makes the folder (and its parents) if it is missing; throws why it cannot be written.
    func prepare() throws(RecordingFile.Failure) {
        var made = ""
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            made += "/" + part
            if mkdir(made, 0o755) != 0, errno != EEXIST {
                throw RecordingFile.Failure(
                    description: "cannot make the sessions folder \(made): \(Errno.text(errno))")
            }
        }
        if access(path, W_OK | X_OK) != 0 {
            throw RecordingFile.Failure(description: "cannot record in \(path): \(Errno.text(errno))")
        }
    }

    /// `2026-11-23T15-42-01Z_D2-4B-7E-10-20-30.jsonl`: sorted by name is sorted by start; no
    /// colons, which some file systems and tools refuse.
    func path(start: Timestamp, device: String?) -> String {
        let stamp = String(start.description.prefix(19)).replacingColons + "Z"
        let suffix = device.map { "_" + $0.replacingColons } ?? ""
        return path + "/" + stamp + suffix + ".jsonl"
    }
}

extension String {
    fileprivate var replacingColons: String {
        String(map { $0 == ":" ? "-" : $0 })
    }
}
