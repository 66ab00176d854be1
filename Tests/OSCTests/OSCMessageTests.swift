import OSC
import Testing

/// The encoding, byte by byte, against the specification's own examples and hand-worked cases.
/// (Tests/OSCCheck reads what hrm sends with python-osc, an independent reader.)
@Suite struct OSCMessageTests {
    /// The specification's example: "/oscillator/4/frequency" with the float 440.0.
    @Test func theSpecificationsExample() {
        let bytes = OSCMessage("/oscillator/4/frequency", [.float(440)]).encoded()
        let expected: [UInt8] =
            Array("/oscillator/4/frequency".utf8) + [0] + Array(",f".utf8) + [0, 0] + [
                0x43, 0xDC, 0x00, 0x00,
            ]
        #expect(bytes == expected)
        #expect(bytes.count % 4 == 0)
    }

    /// "/foo" with 1000, -1, "hello", 1.234, 5.678: the specification's second example.
    @Test func theSecondExample() {
        let bytes = OSCMessage(
            "/foo", [.int(1000), .int(-1), .string("hello"), .float(1.234), .float(5.678)]
        )
        .encoded()
        let expected: [UInt8] = [
            0x2F, 0x66, 0x6F, 0x6F, 0, 0, 0, 0,
            0x2C, 0x69, 0x69, 0x73, 0x66, 0x66, 0, 0,
            0, 0, 0x03, 0xE8,
            0xFF, 0xFF, 0xFF, 0xFF,
            0x68, 0x65, 0x6C, 0x6C, 0x6F, 0, 0, 0,
            0x3F, 0x9D, 0xF3, 0xB6,
            0x40, 0xB5, 0xB2, 0x2D,
        ]
        #expect(bytes == expected)
    }

    /// Booleans are tags without bytes; a string whose length is a multiple of 4 gets 4 zeros.
    @Test func booleansAndPadding() {
        #expect(
            OSCMessage("/abc", [.bool(true), .bool(false)]).encoded()
                == Array("/abc".utf8) + [0, 0, 0, 0] + Array(",TF".utf8) + [0])
        #expect(OSCMessage("/ab", []).encoded() == Array("/ab".utf8) + [0] + Array(",".utf8) + [0, 0, 0])
    }
}
