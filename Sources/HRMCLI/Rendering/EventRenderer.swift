import Monitor
import Outputs
import SessionLibrary

/// How `watch` writes events: one renderer per output mode. Each returns the text to write to
/// stdout for an event (nil for nothing); diagnostics go to stderr separately.
protocol EventRenderer {
    /// Text to write before any event (a CSV header), if any.
    var header: String? { get }
    /// The stdout text for `event`, newline included; nil when this mode does not show it.
    mutating func render(_ event: MonitorEvent) -> String?
    /// `render`'s text lent to `write` as UTF-8 bytes, for a renderer that can make them without a
    /// `String` (JSON lines, one per notification); what `write` returned, or nil when this mode
    /// does not show `event`.
    mutating func write(_ event: MonitorEvent, to write: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool?
    /// Text to write when the run ends (restores a live display), if any.
    mutating func finish() -> String?
    /// Before a line on stderr: what takes the live display off the screen, if there is one.
    mutating func suspend() -> String?
    /// After it: what draws the live display again.
    mutating func resume() -> String?
    /// Whether the renderer redraws a line in place (a live display): lines for stderr then wait
    /// their turn between `suspend` and `resume`.
    var redrawsInPlace: Bool { get }
}

extension EventRenderer {
    var header: String? { nil }
    mutating func write(_ event: MonitorEvent, to write: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool? {
        guard var text = render(event) else { return nil }
        return text.withUTF8 { write($0) }
    }
    mutating func finish() -> String? { nil }
    mutating func suspend() -> String? { nil }
    mutating func resume() -> String? { nil }
    var redrawsInPlace: Bool { false }
}
