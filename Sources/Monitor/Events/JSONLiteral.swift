/// One of the keys and values a measurement's line is made of (and every event's `type`): a
/// piece of one string literal, copied into a line as it is.
///
/// The linker lays a program's string literals out by a hash of their bytes (lld shards its
/// merged strings), so the 19 literals of a measurement's line lay on 9 pages of `.rodata`: each
/// a TLB entry and a cache line fetched cold after the 5 ms between two notifications (#29,
/// Benchmarks/Watch/README.md, seventh session). As pieces of one literal they lie on one or two.
/// `JSONLiteralTests` checks each piece's text.
package struct JSONLiteral: Sendable, Hashable {
    private let offset: UInt16
    private let count: UInt16

    private init(_ offset: UInt16, _ count: UInt16) {
        (self.offset, self.count) = (offset, count)
    }

    /// Every piece, one after another (each one's offset and length below; a new piece goes at
    /// the end).
    @inline(__always)
    private static var table: StaticString {
        """
        typetimedevicebpmcontactenergy_kjrr_1024rr_msformatzonehexmono_msnulldetectednot_detected\
        unsupporteduint8uint16measurementstatusinfobatteryhrvalertsummaryerrorrelayecgaccecg_beat
        """
    }

    /// The piece's bytes, lent to `body`.
    @inline(__always)
    package func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        Self.table.withUTF8Buffer { table in
            body(UnsafeBufferPointer(rebasing: table[Int(offset)..<Int(offset) + Int(count)]))
        }
    }

    /// The piece as a `String` (for people and tests, not for lines).
    package var text: String { withBytes { String(decoding: $0, as: UTF8.self) } }

    // Keys.
    static var type: Self { Self(0, 4) }
    static var time: Self { Self(4, 4) }
    package static var device: Self { Self(8, 6) }
    static var bpm: Self { Self(14, 3) }
    static var contact: Self { Self(17, 7) }
    static var energyKJ: Self { Self(24, 9) }
    static var rr1024: Self { Self(33, 7) }
    static var rrMs: Self { Self(40, 5) }
    static var format: Self { Self(45, 6) }
    static var zone: Self { Self(51, 4) }
    static var hex: Self { Self(55, 3) }
    static var monoMs: Self { Self(58, 7) }

    // Values.
    static var null: Self { Self(65, 4) }
    package static var detected: Self { Self(69, 8) }
    package static var notDetected: Self { Self(77, 12) }
    package static var unsupported: Self { Self(89, 11) }
    package static var uint8: Self { Self(100, 5) }
    package static var uint16: Self { Self(105, 6) }

    // Event types (and `device`, above).
    package static var measurement: Self { Self(111, 11) }
    package static var status: Self { Self(122, 6) }
    package static var info: Self { Self(128, 4) }
    package static var battery: Self { Self(132, 7) }
    package static var hrv: Self { Self(139, 3) }
    package static var alert: Self { Self(142, 5) }
    package static var summary: Self { Self(147, 7) }
    package static var error: Self { Self(154, 5) }
    package static var relay: Self { Self(159, 5) }
    package static var ecg: Self { Self(164, 3) }
    package static var acc: Self { Self(167, 3) }
    package static var ecgBeat: Self { Self(170, 8) }
}

extension JSONLine.Key {
    /// The measurement line's keys, from its literal (JSONLiteral says why).
    static var type: Self { Self(JSONLiteral.type) }
    static var time: Self { Self(JSONLiteral.time) }
    static var device: Self { Self(JSONLiteral.device) }
    static var bpm: Self { Self(JSONLiteral.bpm) }
    static var contact: Self { Self(JSONLiteral.contact) }
    static var energyKJ: Self { Self(JSONLiteral.energyKJ) }
    static var rr1024: Self { Self(JSONLiteral.rr1024) }
    static var rrMs: Self { Self(JSONLiteral.rrMs) }
    static var format: Self { Self(JSONLiteral.format) }
    static var zone: Self { Self(JSONLiteral.zone) }
    static var hex: Self { Self(JSONLiteral.hex) }
    static var monoMs: Self { Self(JSONLiteral.monoMs) }
}
