#if canImport(Glibc)
    import Glibc
#endif

/// Opens a file that hrm or hrm-sim reads but did not write, refusing anything that is not a
/// regular file: a FIFO would block the open or the first read forever, `/dev/zero` never ends,
/// a directory has no text. The open itself cannot block (`O_NONBLOCK`), and the type is taken
/// from the descriptor (`fstat`), so nothing can be swapped in between the check and the read.
public enum RegularFile {
    /// A descriptor for reading `path` (blocking again once it is known to be a regular file),
    /// which the caller closes. With `followingLinks: false` a symbolic link is refused too.
    public static func open(_ path: String, source: String, followingLinks: Bool = true) throws(InputError)
        -> Int32
    {
        var flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC
        if !followingLinks { flags |= O_NOFOLLOW }
        let descriptor = Glibc.open(path, flags)
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP, !followingLinks {
                throw InputError(source: source, reason: .notRegular("a symbolic link"))
            }
            throw InputError(source: source, reason: .system(code))
        }
        var status = stat()
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
