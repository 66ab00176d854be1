/// One RR interval: the time between two successive R waves, in units of 1/1024 s.
public struct RRInterval: Hashable, Sendable, CustomStringConvertible {
    /// The raw value as sent: 1/1024 s per tick (not milliseconds).
    public var ticks: UInt16

    /// An interval of `ticks` 1/1024 s.
    public init(ticks: UInt16) {
        self.ticks = ticks
    }

    /// The exact length in milliseconds. `ticks * 1000 / 1024` is exact in a Double: 1024 ticks
    /// is 1000 ms, 845 ticks is 825.1953125 ms.
    public var milliseconds: Double {
        Double(ticks) * 1000 / 1024
    }

    /// The exact length in seconds.
    public var seconds: Double {
        Double(ticks) / 1024
    }

    /// The length in milliseconds, e.g. `825.1953125 ms`.
    public var description: String {
        "\(milliseconds) ms"
    }
}

/// The RR intervals of one measurement, oldest first.
///
/// They are kept as the little-endian bytes they arrived in, usually a slice of the frame itself,
/// so decoding a measurement copies nothing and allocates nothing; each interval is read on access.
public struct RRIntervals: RandomAccessCollection, Hashable, Sendable {
    /// Little-endian UINT16 pairs; always an even number of bytes.
    @usableFromInline let bytes: ArraySlice<UInt8>

    /// Wraps little-endian bytes whose count the caller has checked to be even.
    @inlinable init(littleEndianBytes bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    /// No intervals.
    public init() {
        self.bytes = []
    }

    /// The intervals given, oldest first, encoded as a frame would carry them.
    public init(_ intervals: some Sequence<RRInterval>) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(intervals.underestimatedCount * 2)
        for interval in intervals {
            bytes.append(UInt8(truncatingIfNeeded: interval.ticks))
            bytes.append(UInt8(truncatingIfNeeded: interval.ticks >> 8))
        }
        self.bytes = bytes[...]
    }

    /// Intervals given as raw 1/1024 s ticks.
    public init(ticks: some Sequence<UInt16>) {
        self.init(ticks.lazy.map(RRInterval.init(ticks:)))
    }

    /// Always 0, whatever slice of a frame the intervals come from.
    public var startIndex: Int { 0 }
    /// The number of intervals.
    public var endIndex: Int { bytes.count / 2 }

    /// The interval at `position` (0 is the oldest); traps when out of range.
    @inlinable public subscript(position: Int) -> RRInterval {
        precondition(position >= 0 && position < bytes.count / 2, "RR interval index out of range")
        let low = bytes[bytes.startIndex + 2 * position]
        let high = bytes[bytes.startIndex + 2 * position + 1]
        return RRInterval(ticks: UInt16(low) | UInt16(high) << 8)
    }

    /// The raw ticks, oldest first.
    public var ticks: [UInt16] { map(\.ticks) }

    /// Exact milliseconds, oldest first.
    public var milliseconds: [Double] { map(\.milliseconds) }

    /// The little-endian encoding, as it appears in a frame.
    public var littleEndianBytes: ArraySlice<UInt8> { bytes }

}
