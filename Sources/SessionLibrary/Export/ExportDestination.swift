package import InputFiles
import Monitor

#if canImport(Glibc)
    import Glibc
#endif

/// Where `hrm export -o FILE` writes, without ever losing a file: not the recording being
/// exported (the same device and inode, whatever the name), not an existing file or a symbolic
/// link unless `--force` (which replaces the link itself, never what it points to), and never a
/// half-written file in place of a whole one: the export goes to a temporary file in the same
/// folder, `fsync`ed, then renamed over the destination, so a full disk leaves the old file as it
/// was. A character device (`/dev/null`) is written as it is: there is nothing to replace.
package struct ExportDestination {
    /// Why the export was not written: the message, and the exit status (73 EX_CANTCREAT before
    /// anything was written, 74 EX_IOERR when writing failed).
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package let status: Int32
    }

    /// What is at the destination now.
    package enum Existing {
        case nothing
        case file
        case link
        case device
    }

    package let path: String
    package let existing: Existing

    /// Checks `path` before any work is done: refuses the input itself, a directory, a FIFO or
    /// socket, and an existing file or link without `force`.
    package init(_ path: String, force: Bool, input: FileIdentity?) throws(Failure) {
        self.path = path
        let name = TerminalText.sanitised(path, limit: TerminalText.messageLimit)
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let code = errno
            guard code == ENOENT else {
                throw Failure(description: "cannot write \(name): \(Errno.text(code))", status: 73)
            }
            existing = .nothing
            return
        }
        if let input, FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)) == input {
            throw Failure(
                description:
                    "cannot write \(name): it is the recording itself (hrm never writes over its input)",
                status: 73)
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: existing = .file
        case S_IFLNK: existing = .link
        case S_IFCHR: existing = .device
        case let kind:
            throw Failure(
                description:
                    "cannot write \(name): it is \(RegularFile.spoken(UInt32(kind))) (leave out -o for standard output)",
                status: 73)
        }
        guard force || existing == .device else {
            let what =
                existing == .link
                ? "it is a symbolic link, which hrm never writes through (--force replaces the link itself)"
                : "it exists already (--force replaces it)"
            throw Failure(description: "cannot write \(name): \(what)", status: 73)
        }
    }

    /// Writes `bytes`: to a device as they are, else through a temporary file renamed into place.
    package func write(_ bytes: [UInt8]) throws(Failure) {
        if existing == .device { return try writeToDevice(bytes) }
        let name = TerminalText.sanitised(path, limit: TerminalText.messageLimit)
        let kept = existing == .nothing ? "nothing was written" : "\(name) is left as it was"
        let (temporary, descriptor) = try createTemporary(name: name)
        func fail(_ what: String, _ code: Int32) -> Failure {
            unlink(temporary)
            return Failure(
                description: "cannot write \(name): \(what)\(Errno.text(code)); \(kept)", status: 74)
        }
        var code = bytes.withUnsafeBufferPointer { Descriptor.writeAll(descriptor, $0) }
        if code != 0 {
            close(descriptor)
            throw fail("", code)
        }
        // On the disk before the rename: a power cut never leaves an empty file by the new name.
        if fsync(descriptor) != 0, errno != EINVAL {
            code = errno
            close(descriptor)
            throw fail("saving it to disk: ", code)
        }
        if close(descriptor) != 0, errno != EINTR { throw fail("", errno) }
        try moveIntoPlace(temporary, name: name, kept: kept)
        Self.syncFolder(Self.folder(of: path))
    }

    /// `.NAME.hrm-PID-N` beside the destination, created new (never through a link).
    private func createTemporary(name: String) throws(Failure) -> (String, Int32) {
        let folder = Self.folder(of: path)
        let base = path.split(separator: "/").last.map(String.init) ?? "export"
        for attempt in 0..<100 {
            let temporary = "\(folder)/.\(base).hrm-\(getpid())-\(attempt)"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if descriptor >= 0 { return (temporary, descriptor) }
            let code = errno
            if code == EEXIST { continue }
            let reason = code == ENOENT ? "its folder does not exist" : Errno.text(code)
            throw Failure(description: "cannot write \(name): \(reason)", status: 73)
        }
        throw Failure(description: "cannot write \(name): no free temporary name beside it", status: 73)
    }

    /// The temporary file becomes the destination. Without `--force` (nothing was there) a hard
    /// link does it, which fails rather than replace a file that appeared meanwhile; on a file
    /// system without hard links, a rename.
    private func moveIntoPlace(_ temporary: String, name: String, kept: String) throws(Failure) {
        if existing == .nothing {
            if link(temporary, path) == 0 {
                unlink(temporary)
                return
            }
            let code = errno
            if code == EEXIST {
                unlink(temporary)
                throw Failure(
                    description: "cannot write \(name): it exists already (--force replaces it)", status: 73)
            }
            guard code == EPERM || code == EOPNOTSUPP || code == ENOSYS else {
                unlink(temporary)
                throw Failure(description: "cannot write \(name): \(Errno.text(code)); \(kept)", status: 74)
            }
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw Failure(description: "cannot write \(name): \(Errno.text(code)); \(kept)", status: 74)
        }
    }

    /// A character device (`/dev/null`, `/dev/full`): written as it is, never followed if a link
    /// was put there since the check.
    private func writeToDevice(_ bytes: [UInt8]) throws(Failure) {
        let name = TerminalText.sanitised(path, limit: TerminalText.messageLimit)
        let descriptor = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot write \(name): \(Errno.text(errno))", status: 73)
        }
        defer { close(descriptor) }
        // Still a device, not a file put there since the check (it would be written over in place).
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFCHR else {
            throw Failure(description: "cannot write \(name): it changed while hrm looked at it", status: 73)
        }
        let code = bytes.withUnsafeBufferPointer { Descriptor.writeAll(descriptor, $0) }
        guard code == 0 else {
            throw Failure(description: "cannot write \(name): \(Errno.text(code))", status: 74)
        }
    }

    /// The rename itself on the disk too (best effort: a folder that cannot sync has no journal).
    private static func syncFolder(_ folder: String) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
