#if canImport(Glibc)
    import Glibc
#endif

/// Opens a file that hrm or hrm-sim reads but did not write, refusing anything that is not a
/// regular file: a FIFO would block the open or the first read forever, `/dev/zero` never ends,
/// a directory has no text. Such a file is not even opened; and as something could be swapped in
/// after that look, the open itself cannot block (`O_NONBLOCK`) and the type is checked again on
/// the descriptor (`fstat`): what is read is what was checked.
public enum RegularFile {
    /// A descriptor for reading `path` (blocking again once it is known to be a regular file),
    /// which the caller closes. A symbolic link is followed: what it points to is checked.
    public static func open(_ path: String, source: String) throws(InputError) -> Int32 {
        var status = stat()
        // Not even opened when it is not a regular file: opening some devices does something
        // (a watchdog starts, a tape rewinds). The fstat below is the check that holds.
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            throw InputError(source: source, reason: .notRegular(spoken(UInt32(status.st_mode & S_IFMT))))
        }
        let descriptor = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw InputError(source: source, reason: .system(errno)) }
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            close(descriptor)
            throw InputError(source: source, reason: .system(code))
        }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else {
            close(descriptor)
            throw InputError(source: source, reason: .notRegular(spoken(UInt32(kind))))
        }
        // Reads of a regular file never wait anyway; blocking again keeps EAGAIN out of them.
        let current = fcntl(descriptor, F_GETFL)
        if current >= 0 { _ = fcntl(descriptor, F_SETFL, current & ~O_NONBLOCK) }
        return descriptor
    }

    /// `a FIFO`, `a directory`: a file type (`st_mode & S_IFMT`) in words.
    public static func spoken(_ kind: UInt32) -> String {
        switch mode_t(kind) {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "of an unknown type"
        }
    }
}
