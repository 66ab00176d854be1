#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A connected UDP socket that sends without ever waiting: a datagram the kernel cannot take now
/// (a full buffer), or that the last one made the receiver's host refuse (nothing listening:
/// ECONNREFUSED), is dropped and counted by the caller. The one owner of its descriptor.
package final class UDPSender: Sendable {
    private let descriptor: Int32

    /// Why a socket could not be made.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, for people.
        package let description: String
    }

    /// Resolves `host` (a blocking call: run it on a thread of its own, never on Swift's pool)
    /// and connects a non-blocking socket to the first address it gives.
    package init(host: String, port: UInt16) throws(Failure) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var found: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, String(port), &hints, &found)
        defer { if let found { freeaddrinfo(found) } }
        guard status == 0, let first = found, let address = first.pointee.ai_addr else {
            let reason = status == 0 ? "no address" : String(cString: gai_strerror(status))
            throw Failure(description: "cannot resolve '\(host)': \(reason)")
        }
        let socketType =
            Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(first.pointee.ai_family, socketType, 0)
        guard fd >= 0 else {
            throw Failure(description: "cannot make a UDP socket: \(String(cString: strerror(errno)))")
        }
        guard connect(fd, address, first.pointee.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "cannot send to \(host) port \(port): \(reason)")
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Sends one datagram; false when it was dropped.
    package func send(_ bytes: [UInt8]) -> Bool {
        let sent = bytes.withUnsafeBytes { buffer in
            Glibc.send(
                descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        }
        return sent == bytes.count
    }
}
