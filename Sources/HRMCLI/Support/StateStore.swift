#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What hrm remembers between runs: the last device watched, in `$XDG_STATE_HOME/hrm/last-device`
/// (default `~/.local/state/hrm/last-device`), one address per file.
struct StateStore {
    let directory: String

    /// The directory the XDG base-directory rules give, or nil when neither XDG_STATE_HOME nor HOME is set.
    init?(environment: [String: String]) {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            directory = state + "/hrm"
        } else if let home = environment["HOME"], !home.isEmpty {
            directory = home + "/.local/state/hrm"
        } else {
            return nil
        }
    }

    init(directory: String) {
        self.directory = directory
    }

    var lastDevicePath: String { directory + "/last-device" }

    /// The remembered address, if any (a missing or unreadable file is simply no memory).
    func lastDevice() -> String? {
        guard let file = fopen(lastDevicePath, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let trimmed = text.trimmingSpaces
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Remembers `address`; returns false (and hrm goes on) when the state directory cannot be written.
    @discardableResult
    func remember(_ address: String) -> Bool {
        guard makeDirectories(directory) else { return false }
        let temporary = lastDevicePath + ".tmp"
        guard let file = fopen(temporary, "w") else { return false }
        let ok = fputs(address + "\n", file) >= 0
        fclose(file)
        return ok && rename(temporary, lastDevicePath) == 0
    }

    private func makeDirectories(_ path: String) -> Bool {
        var current = ""
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0 && errno != EEXIST { return false }
        }
        return true
    }
}
