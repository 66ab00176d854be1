/// Where the broker is: `mqtt://[user[:password]@]host[:port]` or `mqtts://…` (TLS). Default ports
/// 1883 and 8883; an IPv6 address in brackets (`[::1]`); user and password percent-decoded. A
/// trailing `/` is accepted; any other path, a query or a fragment is not (topics are not part of
/// the broker's address).
public struct MQTTBrokerURL: Sendable, Equatable, CustomStringConvertible {
    /// Host name or IP address; an IPv6 address without its brackets.
    public var host: String
    /// TCP port: as given, else 1883 (mqtt) or 8883 (mqtts).
    public var port: UInt16
    /// True for `mqtts://`.
    public var tls: Bool
    /// The user name, percent-decoded; nil when the URL has no `user@`.
    public var username: String?
    /// The password, percent-decoded; nil when the URL has none. Never printed (see `description`).
    public var password: String?

    /// Parses a broker URL as the type's documentation describes.
    ///
    /// - Throws: `MQTTError` with code `.invalidURL`, saying what is wrong without quoting the text
    ///   (it may hold a password).
    public init(parsing text: String) throws(MQTTError) {
        // Messages never quote the whole text: it may hold a password.
        func invalid(_ what: String) -> MQTTError { MQTTError(.invalidURL, "broker URL: \(what)") }

        guard let schemeEnd = text.firstRange(of: "://") else {
            throw invalid("no scheme (expected mqtt://host or mqtts://host)")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        switch scheme {
        case "mqtt": tls = false
        case "mqtts": tls = true
        default:
            throw invalid("unsupported scheme '\(scheme.prefix(20))' (expected mqtt:// or mqtts://)")
        }

        var rest = text[schemeEnd.upperBound...]
        if let index = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            throw invalid(
                rest[index] == "?" ? "a query ('?…') is not allowed" : "a fragment ('#…') is not allowed")
        }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...] == "/" else {
                throw invalid("a path is not allowed after the host (topics are set elsewhere)")
            }
            rest = rest[..<slash]
        }

        // The last '@' separates user information from the host: a password with an unencoded '@'
        // still parses.
        var hostPort = rest
        username = nil
        password = nil
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            hostPort = rest[rest.index(after: at)...]
            let user: Substring
            if let colon = userInfo.firstIndex(of: ":") {
                user = userInfo[..<colon]
                password = try percentDecoded(userInfo[userInfo.index(after: colon)...], "password", invalid)
            } else {
                user = userInfo
            }
            guard !user.isEmpty else { throw invalid("an empty user name before '@'") }
            username = try percentDecoded(user, "user name", invalid)
        }

        var portText: Substring? = nil
        if hostPort.first == "[" {
            guard let close = hostPort.firstIndex(of: "]") else {
                throw invalid("an unclosed '[' in the host")
            }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }),
                host.contains(":")
            else { throw invalid("'[\(host)]' is not an IPv6 address") }
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw invalid("unexpected text after ']'") }
                portText = after.dropFirst()
            }
        } else {
            if hostPort.filter({ $0 == ":" }).count > 1 {
                throw invalid("the host is not a valid name (IPv6 addresses go in brackets: [::1])")
            }
            if let colon = hostPort.firstIndex(of: ":") {
                host = String(hostPort[..<colon])
                portText = hostPort[hostPort.index(after: colon)...]
            } else {
                host = String(hostPort)
            }
            guard !host.isEmpty else { throw invalid("no host") }
            guard !host.contains(":"),
                host.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0 != "[" && $0 != "]" })
            else { throw invalid("the host is not a valid name (IPv6 addresses go in brackets: [::1])") }
        }

        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = UInt16(portText), value > 0
            else { throw invalid("the port '\(portText.prefix(10))' is not a number from 1 to 65535") }
            port = value
        } else {
            port = tls ? 8883 : 1883
        }
    }

    /// The URL without the password (`mqtts://alice:***@broker:8883`): safe for logs and messages.
    public var description: String {
        var text = tls ? "mqtts://" : "mqtt://"
        if let username {
            text += percentEncoded(username)
            if password != nil { text += ":***" }
            text += "@"
        }
        text += host.contains(":") ? "[\(host)]" : host
        return text + ":\(port)"
    }

    /// `host:port` (brackets around IPv6), what error messages call "the broker at …".
    var address: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
}

private func percentDecoded(
    _ text: Substring, _ what: String, _ invalid: (String) -> MQTTError
) throws(MQTTError) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
        guard byte == UInt8(ascii: "%") else {
            bytes.append(byte)
            continue
        }
        guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
            throw invalid("a '%' in the \(what) is not followed by two hex digits")
        }
        bytes.append(high << 4 | low)
    }
    guard let decoded = String(validating: bytes, as: UTF8.self) else {
        throw invalid("the \(what) is not UTF-8 once percent-decoded")
    }
    return decoded
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// RFC 3986 unreserved characters stay; everything else (':', '@', '/', '%', spaces, UTF-8) is
/// encoded, so that the description parses back to the same user name.
private func percentEncoded(_ text: String) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var bytes: [UInt8] = []
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            bytes.append(byte)
        default:
            bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}
