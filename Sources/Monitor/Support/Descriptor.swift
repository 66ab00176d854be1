#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing to a file descriptor whole, whatever it is (stdout, a recording, a state file).
package enum Descriptor {
    /// Writes every byte, retrying short writes and EINTR. Returns 0, or the errno of the write
    /// that failed (taken at once: anything called after a failed write may change `errno`).
    @discardableResult
    package static func writeAll(_ fd: Int32, _ buffer: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard var pointer = buffer.baseAddress else { return 0 }
        var remaining = buffer.count
        while remaining > 0 {
            let written = write(fd, pointer, remaining)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                return code
            }
            pointer += written
            remaining -= written
        }
        return 0
    }
}

/// An errno in words, for messages: `Bad file descriptor`, not `errno 9`.
package enum Errno {
    package static func text(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}
