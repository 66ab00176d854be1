/// Where OSC messages go: `HOST[:PORT]` as `--osc` takes it. A host is a name, an IPv4 address
/// or an IPv6 address in brackets (`[::1]:9000`; a bare IPv6 address takes the default port).
package struct OSCDestination: Sendable, Equatable, CustomStringConvertible {
    /// A name or an address, without brackets.
    package var host: String
    /// 1 to 65535.
    package var port: UInt16

    /// VRChat's OSC input port.
    package static let defaultPort: UInt16 = 9000

    /// A destination given as its parts.
    package init(host: String, port: UInt16 = OSCDestination.defaultPort) {
        self.host = host
        self.port = port
    }

    /// Why a `--osc` value is not a destination, in words.
    package struct Invalid: Error, Sendable, CustomStringConvertible {
        /// What is wrong and what is accepted.
        package let description: String
    }

    /// `text` as a destination, or what is wrong with it.
    package init(parsing text: String) throws(Invalid) {
        let rule = "give HOST or HOST:PORT (127.0.0.1:9000, [::1]:9000), PORT from 1 to 65535"
        var host = Substring(text)
        var port: Substring? = nil
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw Invalid(description: "'[' without ']': \(rule)")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else {
                    throw Invalid(description: "unexpected text after ']': \(rule)")
                }
                port = rest.dropFirst()
            }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0.isNewline || $0 == "/" }) else {
            throw Invalid(description: "no host: \(rule)")
        }
        self.host = String(host)
        guard let port else {
            self.port = Self.defaultPort
            return
        }
        guard !port.isEmpty else { throw Invalid(description: "no port after ':': \(rule)") }
        guard port.allSatisfy({ $0.isASCII && $0.isNumber }), port.count <= 5, let number = Int(port),
            (1...65535).contains(number), let value = UInt16(exactly: number)
        else { throw Invalid(description: "port '\(port)' is not from 1 to 65535: \(rule)") }
        self.port = value
    }

    /// `127.0.0.1:9000`, `[::1]:9000`.
    package var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
