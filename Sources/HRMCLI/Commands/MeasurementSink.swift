import HeartRate
import Synchronization

/// Decodes and prints notifications on the thread that receives them (the BlueZ client's
/// `inline` delivery): a notification then costs one thread wake-up, not three. It counts what
/// it printed and says, through `stops`, when `--count` is reached or stdout's reader went away.
final class MeasurementSink: Sendable {
    struct Counts: Sendable {
        var measurements = 0
        var malformed = 0
    }

    private let printer: EventPrinter
    private let address: String
    private let countLimit: Int?
    private let counts: Mutex<Counts>
    private let stop: AsyncStream<Void>.Continuation
    /// Yields once when the sink wants the stream to end.
    let stops: AsyncStream<Void>

    init(printer: EventPrinter, address: String, countLimit: Int?, counts: Counts) {
        self.printer = printer
        self.address = address
        self.countLimit = countLimit
        self.counts = Mutex(counts)
        (stops, stop) = AsyncStream.makeStream(of: Void.self)
    }

    var current: Counts { counts.withLock { $0 } }

    func handle(_ bytes: [UInt8]) {
        let event: MonitorEvent
        do {
            let measurement = try HeartRateMeasurement(decoding: bytes)
            // Values after --count was reached (still on their way as the stream ends) are not
            // what was asked for.
            let wanted = counts.withLock { counts in
                if let countLimit, counts.measurements >= countLimit { return false }
                counts.measurements += 1
                return true
            }
            guard wanted else { return }
            event = MonitorEvent(device: address, kind: .measurement(measurement))
        } catch {
            counts.withLock { $0.malformed += 1 }
            event = MonitorEvent(
                device: address,
                kind: .error(
                    code: error.code.rawValue, message: error.description, hex: HexPayload.format(bytes)))
        }
        let open = printer.emit(event)
        let reached = countLimit.map { limit in counts.withLock { $0.measurements >= limit } } ?? false
        if reached || !open { stop.yield() }
    }
}
