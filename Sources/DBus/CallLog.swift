import Logging
import Synchronization
internal import Threads

// What a connection logs about method calls, at debug level: every call made through `call`
// (and so every Get, GetAll, Set and GetManagedObjects) is one line when it goes out and one when
// it ends (the reply, the error, or the timeout, with the time it took). Arguments and replies
// are cut short (`Value.logSummary`), so a GetManagedObjects reply or a notification's bytes never
// fill the log. Nothing here runs unless the connection's logger logs at debug.

/// A method call as the log names it.
struct CallSummary {
    let destination: BusName?
    let path: ObjectPath
    let interface: InterfaceName?
    let member: MemberName
    let body: [Value]

    /// `org.bluez.Device1.Connect`: what a person greps for.
    var name: String {
        interface.map { "\($0.rawValue).\(member.rawValue)" } ?? member.rawValue
    }

    /// The arguments in parentheses, each cut short.
    var arguments: String {
        "(" + body.map { $0.logSummary() }.joined(separator: ", ") + ")"
    }

    func metadata(call number: UInt64) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["path": "\(path.rawValue)", "call": "\(number)"]
        if let destination { metadata["dest"] = "\(destination.rawValue)" }
        return metadata
    }

    /// A call sent without waiting for a reply.
    func logSent(to logger: Logger) {
        var metadata: Logger.Metadata = ["path": "\(path.rawValue)", "reply": "none"]
        if let destination { metadata["dest"] = "\(destination.rawValue)" }
        logger.debug("call \(name)\(arguments)", metadata: metadata)
    }

    /// Numbers the calls of the process, so that a reply's line names its call's.
    static let numbers = Atomic<UInt64>(0)
}

func millisecondsSince(_ start: UInt64) -> UInt64 {
    (monotonicNanos() &- start) / 1_000_000
}

extension Connection {
    /// `send(call:timeout:)` with a line before and one after.
    func sendLogged(call message: OwnedMessage, _ call: CallSummary, timeout: Duration)
        async throws(DBusError) -> Message
    {
        let number = CallSummary.numbers.wrappingAdd(1, ordering: .relaxed).newValue
        var metadata = call.metadata(call: number)
        logger.debug(
            "call \(call.name)\(call.arguments)",
            metadata: metadata.merging(["timeout": "\(timeout.compactText)"]) { $1 })
        let start = monotonicNanos()
        do throws(DBusError) {
            let reply = try await send(call: message, timeout: timeout)
            metadata["ms"] = "\(millisecondsSince(start))"
            let values = reply.body.map { $0.logSummary() }.joined(separator: ", ")
            logger.debug("reply \(call.name)\(values.isEmpty ? "" : ": " + values)", metadata: metadata)
            return reply
        } catch {
            let elapsed = millisecondsSince(start)
            metadata["ms"] = "\(elapsed)"
            switch error.code {
            case .noReply where elapsed * 1_000_000 >= timeout.clampedNanoseconds:
                logger.debug("timeout \(call.name): no reply within \(timeout.shortText)", metadata: metadata)
            case .cancelled:
                logger.debug("cancelled \(call.name)", metadata: metadata)
            default:
                logger.debug(
                    "error \(call.name): \(error.name.rawValue): \(error.message)", metadata: metadata)
            }
            throw error
        }
    }
}

extension Value {
    /// The value as `description` writes it, but short enough for a log line: byte arrays in hex
    /// (the first 32 bytes, then the count), strings cut at 64 characters, and the whole cut
    /// after about `limit` characters (then `…` and how many elements were left out). A
    /// GetManagedObjects reply is never written out whole: the writing stops at the limit.
    public func logSummary(limit: Int = 160) -> String {
        var writer = SummaryWriter(room: limit)
        writer.write(self)
        return writer.text
    }
}

/// Writes values until its room is used up, then stops (and says so once).
private struct SummaryWriter {
    var text = ""
    var room: Int
    var full = false
    /// The list that ran out of room has said how long it was (the lists around it need not).
    var counted = false

    mutating func append(_ piece: String) {
        guard !full else { return }
        text += piece
        room -= piece.utf8.count
        if room <= 0 {
            full = true
            text += "…"
        }
    }

    mutating func write(_ value: Value) {
        guard !full else { return }
        switch value {
        case .string(let s):
            append(s.count > 64 ? (String(s.prefix(64)) + "…").debugDescription : s.debugDescription)
        case .bytes(let bytes):
            append(Self.hex(bytes))
        case .array(_, let items):
            writeList(items, open: "[", close: "]") { $0.write($1) }
        case .dictionary(_, _, let entries):
            writeList(entries, open: "{", close: "}") { writer, entry in
                writer.write(entry.key)
                writer.append(": ")
                writer.write(entry.value)
            }
        case .structure(let fields):
            writeList(fields, open: "(", close: ")") { $0.write($1) }
        case .variant(let inner):
            // The signature of a variant says little in a log; its value says what was sent.
            write(inner)
        default:
            append(value.description)
        }
    }

    mutating func writeList<T>(_ items: [T], open: String, close: String, _ element: (inout Self, T) -> Void)
    {
        append(open)
        for (index, item) in items.enumerated() {
            if full {
                if !counted { text += " (\(items.count) in all)" }
                counted = true
                return
            }
            if index > 0 { append(", ") }
            element(&self, item)
        }
        append(close)
    }

    /// `ay:0648c003`, or `ay:0648…(300 bytes)`.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        var text = "ay:"
        for byte in bytes.prefix(32) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        if bytes.count > 32 { text += "…(\(bytes.count) bytes)" }
        return text
    }
}
