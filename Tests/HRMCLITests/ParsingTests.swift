import ArgumentParser
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

@Suite struct ParsingTests {
    @Test func decodeDefaults() throws {
        let command = try #require(try HRM.parseAsRoot(["decode", "0648"]) as? DecodeCommand)
        #expect(command.payloads == ["0648"])
        #expect(command.characteristic == .measurement)
        #expect(command.json == false)
    }

    @Test func decodeOptions() throws {
        let command = try #require(
            try HRM.parseAsRoot(["decode", "--json", "-c", "0x2A38", "01", ""]) as? DecodeCommand)
        #expect(command.payloads == ["01", ""])
        #expect(command.characteristic == .bodySensorLocation)
        #expect(command.json)
    }

    @Test func unknownCharacteristicIsAUsageError() {
        #expect(throws: (any Error).self) { try HRM.parseAsRoot(["decode", "-c", "2a99", "00"]) }
    }
}

@Suite struct HexPayloadTests {
    @Test(arguments: [
        "0648", "06 48", "06:48", "0x06,0x48", "0X06, 0X48", "06-48", " 06\t48 ", "6:48", "0x0648",
    ])
    func acceptedForms(text: String) throws {
        #expect(try HexPayload.parse(text) == [0x06, 0x48])
    }

    @Test func emptyTextIsAnEmptyPayload() throws {
        #expect(try HexPayload.parse("") == [])
        #expect(try HexPayload.parse("  ") == [])
    }

    @Test func errorsSayWhere() {
        #expect(throws: HexPayload.ParseError(column: 5, reason: "'g' is not a hex digit")) {
            try HexPayload.parse("06 4g")
        }
        #expect(throws: HexPayload.ParseError(column: 1, reason: "odd number of hex digits (3)")) {
            try HexPayload.parse("064")
        }
        #expect(throws: HexPayload.ParseError(column: 4, reason: "'0x' has no digits after it")) {
            try HexPayload.parse("06 0x")
        }
    }

    @Test func caretPointsAtTheColumn() {
        let error = HexPayload.ParseError(column: 5, reason: "x")
        #expect(error.pointing(into: "06 4g") == "  06 4g\n      ^")
    }

    @Test func formatIsLowercaseWithoutSeparators() {
        #expect(HexPayload.format([0x0E, 0x48, 0xFF]) == "0e48ff")
        #expect(HexPayload.format([]) == "")
    }
}

@Suite struct JSONLineTests {
    @Test func keysInOrderAndEscaping() {
        var json = JSONLine(type: "x")
        json.add("s", "a\"b\\c\n\u{1}é")
        json.add("n", nil as Int?)
        json.add("d", [825.1953125, 1000])
        json.add("b", true)
        #expect(
            json.line == #"{"type":"x","s":"a\"b\\c\n\u0001é","n":null,"d":[825.1953125,1000.0],"b":true}"#)
    }

    /// A line built in the stack's scratch reads as one built on the heap, however long it
    /// grows (past the scratch's 512 bytes it moves).
    @Test func scratchLinesGrowIntoTheHeap() {
        for length in [0, 1, 100, 130, 131, 500, 2000] {
            let values = Array(0..<length)
            var heap = JSONLine(literalType: .measurement)
            heap.add("v", values)
            let expected = heap.finished(newline: true)
            let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 512)
            defer { scratch.deallocate() }
            let built = {
                var line = JSONLine(scratch: scratch, literalType: .measurement)
                line.add("v", values)
                return line.withFinishedBytes(newline: true) { String(decoding: $0, as: UTF8.self) }
            }()
            #expect(built == expected, "\(length) values")
        }
    }

    @Test func integersAsDecimalDigits() {
        var json = JSONLine()
        json.add("zero", 0)
        json.add("small", [7, -42, 1000])
        json.add("max", Int.max)
        json.add("min", Int.min)
        #expect(
            json.line
                == #"{"zero":0,"small":[7,-42,1000],"max":9223372036854775807,"min":-9223372036854775808}"#)
    }

    /// Each character that needs escaping found at every position of a longer string (the check
    /// reads eight bytes at a time), and none found in multi-byte characters.
    @Test func escapesFoundAtEveryPosition() {
        let escapes = [
            ("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{1F}", #"\u001f"#), ("\u{0}", #"\u0000"#),
        ]
        for (special, escaped) in escapes {
            for position in 0..<20 {
                let before = String(repeating: "a", count: position)
                let after = String(repeating: "b", count: 19 - position)
                var json = JSONLine()
                json.add("s", before + special + after)
                #expect(
                    json.line == #"{"s":""# + before + escaped + after + #""}"#, "\(escaped) at \(position)")
            }
        }
        var json = JSONLine()
        json.add("s", "héllo wörld ♥ ♥ ♥ über")
        #expect(json.line == #"{"s":"héllo wörld ♥ ♥ ♥ über"}"#)
    }

    /// Past the first buffer's 256 bytes, a nested object, a key made at run time, a time, and
    /// the newline `watch --json` ends its lines with.
    @Test func longLinesObjectsTimesAndTheNewline() {
        var json = JSONLine(type: "long")
        let long = String(repeating: "x", count: 300)
        json.add("s", long)
        json.add("many", Array(0..<100))
        var inner = JSONLine()
        inner.add("k", "v")
        json.add("o", object: inner)
        json.add(JSONLine.Key("zone\(3)_min"), 1.5)
        json.add("t", Timestamp(millisecondsSinceEpoch: 1_795_000_000_123))
        let numbers = (0..<100).map(String.init).joined(separator: ",")
        let expected =
            #"{"type":"long","s":"\#(long)","many":[\#(numbers)],"o":{"k":"v"},"zone3_min":1.5,"t":"2026-11-18T11:06:40.123Z"}"#
        #expect(json.line == expected)
        #expect(json.finished(newline: true) == expected + "\n")
    }
}
