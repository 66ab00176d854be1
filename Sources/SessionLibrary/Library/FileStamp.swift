import Monitor

#if canImport(Glibc)
    import Glibc
#endif

/// What `stat` says of a file, to notice that it changed without reading it: its size, times
/// (nanoseconds since the epoch) and inode. A file rewritten in place changes its size or mtime;
/// one replaced by another of the same size and time changes its inode; ctime catches the rest
/// (a chmod that makes an unreadable file readable).
package struct FileStamp: Equatable, Sendable {
    package var size: Int64
    package var modified: Int64
    package var changed: Int64
    package var inode: Int64
    /// A regular file (anything else is never read as a recording).
    package var regular: Bool

    /// Every stored property, as given.
    package init(size: Int64, modified: Int64, changed: Int64, inode: Int64, regular: Bool) {
        self.size = size
        self.modified = modified
        self.changed = changed
        self.inode = inode
        self.regular = regular
    }

    init(_ status: stat) {
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        changed = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
        inode = Int64(truncatingIfNeeded: status.st_ino)
        regular = status.st_mode & S_IFMT == S_IFREG
    }

    /// The stamp of `path` (following a link, as reading it would); nil when it cannot be had.
    package static func of(_ path: String) -> FileStamp? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileStamp(status)
    }

    /// The recordings of `folder` (`*.jsonl`) and their stamps, by one `readdir` and a `stat`
    /// each, never a read; nil when the folder does not exist yet. A name that vanishes between
    /// the two (a file removed as it is listed) is left out.
    package static func scan(_ folder: SessionsFolder) throws(SessionsFolder.Unreadable) -> [String:
        FileStamp]?
    {
        guard let directory = opendir(folder.path) else {
            if errno == ENOENT { return nil }
            throw SessionsFolder.Unreadable(description: "cannot read \(folder.path): \(Errno.text(errno))")
        }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        var stamps: [String: FileStamp] = [:]
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasSuffix(".jsonl") else { continue }
            var status = stat()
            // A dangling link, or a file gone since readdir: a stamp that never matches, so that
            // reading it says why.
            stamps[name] =
                fstatat(descriptor, name, &status, 0) == 0
                ? FileStamp(status) : FileStamp(size: -1, modified: 0, changed: 0, inode: 0, regular: false)
        }
        return stamps
    }
}
