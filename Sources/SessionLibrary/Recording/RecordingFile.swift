import Monitor
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A recording's file: created new (never an old one appended to or overwritten), written a whole
/// line per `write(2)`, `fsync`ed when asked. Owns its descriptor. Sendable so that its blocking
/// calls can run on a thread of their own (`RecordingSink`'s `WorkerThread`); one caller at a
/// time.
package final class RecordingFile: Sendable {
    /// Why a recording cannot be made or go on: a message for people that names the path.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package let path: String
    /// -1 once closed.
    private let descriptor: Atomic<Int32>

    /// Creates `path`, which must not exist yet; its directory must.
    package init(creating path: String) throws(Failure) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            let reason =
                switch code {
                case EEXIST where Self.isDirectory(path), EISDIR: "it is a directory"
                case EEXIST: "it exists already (hrm never writes over a recording)"
                case ENOENT where !Self.isDirectory(Self.folder(of: path)): "its folder does not exist"
                default: Errno.text(code)
                }
            throw Failure(description: "cannot record to \(path): \(reason)")
        }
        self.path = path
        self.descriptor = Atomic(descriptor)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    deinit {
        let descriptor = descriptor.load(ordering: .acquiring)
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Writes `line` (which ends with its newline) whole, retrying short writes and EINTR.
    package func write(_ line: String) throws(Failure) {
        var line = line
        let descriptor = descriptor.load(ordering: .acquiring)
        let code = line.withUTF8 { bytes in Descriptor.writeAll(descriptor, bytes) }
        if code != 0 { throw Failure(description: "cannot write to \(path): \(Errno.text(code))") }
    }

    /// What is written so far onto the disk.
    package func sync() throws(Failure) {
        let descriptor = descriptor.load(ordering: .acquiring)
        guard descriptor >= 0, fsync(descriptor) != 0 else { return }
        let code = errno
        // A device that cannot sync (a pipe, /dev/null) has nothing to lose.
        if code == EINVAL || code == EROFS { return }
        throw Failure(description: "cannot save \(path) to disk: \(Errno.text(code))")
    }

    /// Closes the file and removes it: a recording made for a run that never started (another
    /// output could not be opened), so that the same command can be run again as it was.
    package func discard() {
        let descriptor = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if descriptor >= 0 { Glibc.close(descriptor) }
        unlink(path)
    }

    package func close() throws(Failure) {
        defer {
            let descriptor = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
            if descriptor >= 0 { Glibc.close(descriptor) }
        }
        try sync()
    }
}
