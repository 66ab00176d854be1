import Monitor

#if canImport(Glibc)
    import Glibc
#endif

/// A reading's recording gets its result as its last line once the session is over (the
/// recording is the truth; the index's `readings` row is made from that line).
package enum ReadinessRecording {
    /// Appends `line` to the recording at `path`, which the session has just closed whole, and
    /// saves it to disk. A symbolic link put there meanwhile is not followed.
    package static func append(_ line: String, to path: String) throws(RecordingFile.Failure) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw RecordingFile.Failure(description: "cannot add the result to \(path): \(Errno.text(errno))")
        }
        defer { close(descriptor) }
        var text = line
        let code = text.withUTF8 { Descriptor.writeAll(descriptor, $0) }
        guard code == 0 else {
            throw RecordingFile.Failure(description: "cannot add the result to \(path): \(Errno.text(code))")
        }
        guard fsync(descriptor) == 0 else {
            throw RecordingFile.Failure(
                description: "cannot save the result to \(path): \(Errno.text(errno))")
        }
    }
}
