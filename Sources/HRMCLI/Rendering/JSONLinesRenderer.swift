import Monitor
import Outputs
import SessionLibrary

/// `--json`: the JSON-lines contract, every event.
///
/// A class: its state would not fit in an existential's inline buffer, so as a struct behind
/// `any EventRenderer` it lived in a box of its own that every notification's `write` had to make
/// unique first.
final class JSONLinesRenderer: EventRenderer {
    private let writer = MonitorEventJSON.LineWriter()

    init() {}

    func render(_ event: MonitorEvent) -> String? {
        MonitorEventJSON.line(event, newline: true)
    }

    func write(_ event: MonitorEvent, to write: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool? {
        writer.withLine(event, newline: true, write)
    }
}
