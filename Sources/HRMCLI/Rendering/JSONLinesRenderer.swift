import Monitor
import Outputs
import SessionLibrary

/// `--json`: the JSON-lines contract, every event.
struct JSONLinesRenderer: EventRenderer {
    mutating func render(_ event: MonitorEvent) -> String? {
        MonitorEventJSON.line(event, newline: true)
    }

    mutating func write(_ event: MonitorEvent, to write: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool? {
        MonitorEventJSON.withLine(event, newline: true) { write($0) }
    }
}
