package import Monitor

#if canImport(Glibc)
    import Glibc
#endif

/// Where `hrm record` keeps recordings and `hrm sessions` finds them:
/// `$XDG_DATA_HOME/hrm/sessions/`, by default `~/.local/share/hrm/sessions/`.
package struct SessionsFolder: Sendable {
    package let path: String

    /// The folder exists and cannot be listed.
    package struct Unreadable: Error, CustomStringConvertible {
        package let description: String
    }

    /// The folder from the environment; nil when neither XDG_DATA_HOME nor HOME says where.
    package static func fromEnvironment() -> SessionsFolder? {
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
    package func prepare() throws(RecordingFile.Failure) {
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

    /// The recordings' file names (`*.jsonl`), newest first (their names start with the start
    /// time); nil when the folder does not exist yet (nothing recorded); throws errno when it
    /// cannot be read.
    package func recordings() throws(SessionsFolder.Unreadable) -> [String]? {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return nil }
            throw Unreadable(description: "cannot read \(path): \(Errno.text(errno))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".jsonl") { names.append(name) }
        }
        return names.sorted(by: >)
    }

    /// `2026-11-23T15-42-01Z_D2-4B-7E-10-20-30.jsonl`: sorted by name is sorted by start; no
    /// colons, which some file systems and tools refuse.
    package func path(start: Timestamp, device: String?) -> String {
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

/// SESSION as `hrm export` and `hrm hrv` take it: a path, `latest`, an index of `hrm sessions`
/// (`-1` the newest, `-2` the one before), or a bare file name from the sessions folder.
package enum SessionReference {
    /// The path `text` means. A path with a slash, and a name that exists here, are themselves;
    /// nil with a reason when an index or `latest` finds no such recording.
    package static func resolve(_ text: String, in folder: SessionsFolder?) -> Result<String, Failure> {
        if text == "latest" || text.first == "-" {
            guard let index = text == "latest" ? 1 : Int(text.dropFirst()), index >= 1, text != "-0" else {
                return .failure(
                    Failure(
                        description:
                            "\(text) is not a session: give a file, latest, or -1, -2, ... as hrm sessions lists them (newest first)"
                    ))
            }
            guard let folder else {
                return .failure(
                    Failure(
                        description:
                            "\(text): neither XDG_DATA_HOME nor HOME is set to an absolute path, so there is no sessions folder"
                    ))
            }
            let names: [String]
            do throws(SessionsFolder.Unreadable) {
                names = try folder.recordings() ?? []
            } catch {
                return .failure(Failure(description: error.description))
            }
            guard index <= names.count else {
                let held =
                    names.isEmpty ? "no recordings" : "\(names.count) recording\(names.count == 1 ? "" : "s")"
                return .failure(Failure(description: "\(text): \(folder.path) holds \(held)"))
            }
            return .success(folder.path + "/" + names[index - 1])
        }
        guard !text.contains("/"), access(text, F_OK) != 0, let folder else { return .success(text) }
        for name in [text, text + ".jsonl"] where access(folder.path + "/" + name, F_OK) == 0 {
            return .success(folder.path + "/" + name)
        }
        return .success(text)
    }

    /// No recording answers to the reference.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }
}
