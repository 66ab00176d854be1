import Monitor
import Outputs
import SessionLibrary

/// `--json`: the JSON-lines contract, every event.
struct JSONLinesRenderer: EventRenderer {
    /// The last second written: a line of the same second copies its date and time of day.
    private var lastSecond = Timestamp.LastSecond()

    mutating func render(_ event: MonitorEvent) -> String? {
        MonitorEventJSON.line(event, newline: true)
    }

    mutating func write(_ event: MonitorEvent, to write: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool? {
        MonitorEventJSON.withLine(event, newline: true, reusing: &lastSecond) { write($0) }
    }
}
