import SessionLibrary
import Testing

/// The recording's line scanner against the general JSON reader: whatever line it takes, the
/// reader takes too and finds the same members; whatever the reader refuses, it refuses. Checked
/// over every prefix of the lines hrm writes and over every byte of them replaced by the bytes
/// that matter to JSON.
@Suite struct FlatJSONLineTests {
    static let lines = [
        #"{"type":"recording","format":1,"hrm":"0.1.0","start":"2026-11-23T10:00:00.000Z","command":"record"}"#,
        #"{"type":"measurement","time":"2026-11-23T10:00:01.000Z","mono_ms":1000,"device":"D2:4B:7E:10:20:30","bpm":120,"contact":"detected","energy_kj":null,"rr_1024":[512,498],"rr_ms":[500.0,486.328125],"format":"uint8","zone":-0.5,"hex":"1678000200f201"}"#,
        #"{"type":"status","time":"2026-11-23T10:00:00.100Z","mono_ms":100,"device":"D2:4B:7E:10:20:30","state":"connected","ok":true,"no":false,"e":[]}"#,
        #"{"type":"info","name":"Polar \"H10\"","x":{"nested":1}}"#,
        #"{ "type" : "status" }"#,
        #"{"a":1e5,"b":[[1]],"c":"\u00e9"}"#,
        #"{"type":"status","type":"info"}"#,
        "{}",
    ]
    static let replacements: [UInt8] = Array(#""\{}[],:0-.eE tfn"#.utf8) + [0x01, 0x7F, 0xC3]

    /// Both readers' verdict on `text`, compared: nil when the scanner left it to the reader.
    @discardableResult
    static func agree(_ text: [UInt8]) -> Bool? {
        let value = try? JSONValue.parse(String(decoding: text, as: UTF8.self))
        return text.withUnsafeBytes { bytes -> Bool? in
            guard let flat = FlatJSONLine.scan(bytes) else { return nil }
            guard case .object(let members)? = value else {
                Issue.record(
                    "the scanner took what the reader refuses: \(String(decoding: text, as: UTF8.self))")
                return false
            }
            #expect(flat.members.count == members.count)
            for (scanned, member) in zip(flat.members, members) {
                #expect(String(decoding: bytes[scanned.key], as: UTF8.self) == member.key)
                switch (scanned.kind, member.value) {
                case (.string, .string(let text)):
                    #expect(String(decoding: bytes[scanned.value], as: UTF8.self) == text)
                case (.number, .number(let number)):
                    #expect(Double(String(decoding: bytes[scanned.value], as: UTF8.self)) == number)
                case (.literal, .bool), (.literal, .null), (.array, .array): break
                default: Issue.record("\(scanned.kind) against \(member.value)")
                }
            }
            return true
        }
    }

    @Test func theScannerAgreesWithTheReaderOnEveryVariation() {
        var taken = 0
        var checked = 0
        for line in Self.lines {
            let bytes = Array(line.utf8)
            for end in 0...bytes.count {
                checked += 1
                if Self.agree(Array(bytes[..<end])) == true { taken += 1 }
            }
            for index in bytes.indices {
                for replacement in Self.replacements {
                    var mutated = bytes
                    mutated[index] = replacement
                    checked += 1
                    if Self.agree(mutated) == true { taken += 1 }
                }
            }
        }
        // The scanner did read most whole lines itself, and the reader saw every other one.
        #expect(taken > 1000, "\(taken) of \(checked)")
    }

    @Test func whatTheScannerLeavesToTheReader() {
        for line in [
            #"{ "type" : "status" }"#, #"{"a":1e5}"#, #"{"b":[[1]]}"#, #"{"c":"\u00e9"}"#, #"{"x":{"y":1}}"#,
        ] {
            #expect(Array(line.utf8).withUnsafeBytes { FlatJSONLine.scan($0) } == nil, "\(line)")
        }
        // A duplicate key is refused by both.
        let duplicate = Array(#"{"type":"status","type":"info"}"#.utf8)
        #expect(duplicate.withUnsafeBytes { FlatJSONLine.scan($0) } == nil)
        #expect((try? JSONValue.parse(String(decoding: duplicate, as: UTF8.self))) == nil)
    }
}
