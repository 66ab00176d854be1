#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What hrm remembers between runs: the last device watched, in `$XDG_STATE_HOME/hrm/last-device`
/// (default `~/.local/state/hrm/last-device`), one address per file.
package struct StateStore {
    package let directory: String

    /// The directory the XDG base-directory rules give, or nil when neither XDG_STATE_HOME nor HOME is set.
    package init?(environment: [String: String]) {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            directory = state + "/hrm"
        } else if let home = environment["HOME"], !home.isEmpty {
            directory = home + "/.local/state/hrm"
        } else {
            return nil
        }
    }

    package init(directory: String) {
        self.directory = directory
    }

    package var lastDevicePath: String { directory + "/last-device" }

    /// The most `last-device` may hold: an address and a newline are 18 bytes; a bigger file is
    /// not one hrm wrote, and is not read.
    package static let sizeLimit = 256

    /// The remembered address, if any (a missing or unreadable file is simply no memory).
    ///
    /// Whatever sits at the path, this returns at once: the file is opened without blocking (a
    /// FIFO would block `open` for good, deaf to Ctrl-C) and without following a symlink, and it
    /// is read only when it is a regular file of at most `sizeLimit` bytes.
    package func lastDevice() -> String? {
        let fd = open(lastDevicePath, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size <= Self.sizeLimit
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: Self.sizeLimit + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return 0 }
                return read(fd, base + count, buffer.count - count)
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        // It grew past the limit since fstat: not a file hrm wrote.
        guard count <= Self.sizeLimit else { return nil }
        let line = bytes[..<count].prefix { $0 != UInt8(ascii: "\n") }
        let trimmed = String(decoding: line, as: UTF8.self).trimmingSpaces
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Forgets the remembered device. Nil when there was none, else whether it is gone (a
    /// regular file removed; anything else at the path is left alone and reported).
    package func forget() -> Bool? {
        var status = stat()
        guard lstat(lastDevicePath, &status) == 0 else { return errno == ENOENT ? nil : false }
        guard status.st_mode & S_IFMT == S_IFREG else { return false }
        return unlink(lastDevicePath) == 0
    }

    /// Remembers `address`; returns false (and hrm goes on) when the state directory cannot be
    /// written or `last-device` is something other than a regular file (a directory, a FIFO, a
    /// symlink: left alone).
    ///
    /// The address goes to `last-device.tmp`, created afresh (`O_EXCL | O_NOFOLLOW`: a file or a
    /// symlink already there is removed first, never written through), then renamed over
    /// `last-device`. On every failure the temporary is removed.
    @discardableResult
    package func remember(_ address: String) -> Bool {
        guard makeDirectories(directory) else { return false }
        var status = stat()
        if lstat(lastDevicePath, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFREG else { return false }
        } else if errno != ENOENT {
            return false
        }
        let temporary = lastDevicePath + ".tmp"
        guard let fd = createAfresh(temporary) else { return false }
        var text = address + "\n"
        let written = text.withUTF8 { Descriptor.writeAll(fd, $0) }
        let closed = close(fd)
        guard written == 0, closed == 0, rename(temporary, lastDevicePath) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// A new file at `path`, opened for writing; a regular file or a symlink already there (a run
    /// that crashed, or a trap) is removed once and the creation tried again.
    private func createAfresh(_ path: String) -> Int32? {
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        for attempt in 0..<2 {
            let fd = open(path, flags, 0o600)
            if fd >= 0 { return fd }
            guard errno == EEXIST, attempt == 0 else { return nil }
            var status = stat()
            guard lstat(path, &status) == 0,
                status.st_mode & S_IFMT == S_IFREG || status.st_mode & S_IFMT == S_IFLNK,
                unlink(path) == 0
            else { return nil }
        }
        return nil
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
