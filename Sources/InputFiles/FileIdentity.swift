#if canImport(Glibc)
    import Glibc
#endif

/// A file by its device and inode: the same file whatever name (a hard link, `./x`, `a/../x`)
/// reaches it. Names are never compared to tell whether two paths are one file.
public struct FileIdentity: Equatable, Sendable {
    public let device: UInt64
    public let inode: UInt64

    /// A `stat`'s `st_dev` and `st_ino`.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    init(_ status: stat) {
        self.init(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// The identity of an open file, or nil when `fstat` fails.
    public init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        self.init(status)
    }
}
