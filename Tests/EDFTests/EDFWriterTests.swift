import Testing

@testable import EDF

/// The writer's bytes against the EDF and EDF+ specifications (edfplus.info). Independent readers
/// (pyedflib, MNE) read them back in EDFIndependentTests.
@Suite struct EDFWriterTests {
    static func text(_ bytes: [UInt8], _ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    static let start = EDFDateTime(year: 2026, month: 11, day: 26, hour: 8, minute: 30, second: 5)

    @Test func headerFields() throws {
        let file = EDFFile(
            start: Self.start, equipment: "hrm Polar H10",
            signals: [.ecg(microvolts: Array(repeating: 100, count: 260), rate: 130)],
            annotations: [EDFAnnotation(onset: 500_000_000, text: "R")])
        let bytes = try EDFWriter.bytes(file)
        #expect(Self.text(bytes, 0..<8) == "0       ")
        #expect(Self.text(bytes, 8..<88).hasPrefix("X X X X "))
        #expect(Self.text(bytes, 88..<168).hasPrefix("Startdate 26-NOV-2026 X X hrm_Polar_H10 "))
        #expect(Self.text(bytes, 168..<176) == "26.11.26")
        #expect(Self.text(bytes, 176..<184) == "08.30.05")
        #expect(Self.text(bytes, 184..<192) == "768     ")
        #expect(Self.text(bytes, 192..<236).hasPrefix("EDF+C   "))
        #expect(Self.text(bytes, 236..<244) == "2       ")
        #expect(Self.text(bytes, 244..<252) == "1       ")
        #expect(Self.text(bytes, 252..<256) == "2   ")
        #expect(Self.text(bytes, 256..<288) == "ECG             EDF Annotations ")
        // Physical dimension, minimum and maximum, digital minimum and maximum.
        let physicalDimension = 256 + 2 * (16 + 80)
        #expect(Self.text(bytes, physicalDimension..<(physicalDimension + 16)) == "uV              ")
        #expect(Self.text(bytes, (physicalDimension + 16)..<(physicalDimension + 32)) == "-32768  -1      ")
        #expect(Self.text(bytes, (physicalDimension + 32)..<(physicalDimension + 48)) == "32767   1       ")
        #expect(Self.text(bytes, (physicalDimension + 48)..<(physicalDimension + 64)) == "-32768  -32768  ")
        #expect(Self.text(bytes, (physicalDimension + 64)..<(physicalDimension + 80)) == "32767   32767   ")
        let samplesPerRecord = physicalDimension + 80 + 2 * 80
        #expect(Self.text(bytes, samplesPerRecord..<(samplesPerRecord + 8)) == "130     ")
        let annotationSamples =
            Int(Self.text(bytes, (samplesPerRecord + 8)..<(samplesPerRecord + 16)).split(separator: " ")[0])
            ?? 0
        #expect(bytes.count == 768 + 2 * (130 * 2 + annotationSamples * 2))
    }

    @Test func recordsHoldSamplesAndTimeKeeping() throws {
        let file = EDFFile(
            start: Self.start, signals: [.ecg(microvolts: [-2, -1, 0, 1, 2], rate: 2)],
            annotations: [
                EDFAnnotation(onset: 1_500_000_000, duration: 250_000_000, text: "strap disconnected"),
                EDFAnnotation(onset: 200_000_000, text: "R"),
            ])
        let bytes = try EDFWriter.bytes(file)
        let recordLength = (bytes.count - 768) / 3
        let records = (0..<3).map {
            Array(bytes[(768 + $0 * recordLength)..<(768 + ($0 + 1) * recordLength)])
        }
        // 1 µV a step: the digital values are the samples; the last record padded with the last.
        #expect(Array(records[0][0..<4]) == [0xFE, 0xFF, 0xFF, 0xFF])
        #expect(Array(records[2][0..<4]) == [0x02, 0x00, 0x02, 0x00])
        let tal0 = Array(records[0][4...])
        #expect(Array(tal0.prefix(13)) == Array("+0\u{14}\u{14}\u{0}+0.2\u{14}R\u{14}\u{0}".utf8))
        let tal1 = Array(records[1][4...])
        #expect(
            Array(tal1.prefix(35))
                == Array("+1\u{14}\u{14}\u{0}+1.5\u{15}0.25\u{14}strap disconnected\u{14}\u{0}".utf8))
        #expect(records[2][4...].starts(with: "+2\u{14}\u{14}\u{0}".utf8))
        #expect(records[2][9...].allSatisfy { $0 == 0 })
    }

    @Test func startBetweenSecondsGoesInTheFirstTimeKeepingTAL() throws {
        var start = Self.start
        start.nanosecond = 345_000_000
        let bytes = try EDFWriter.bytes(EDFFile(start: start, signals: [.ecg(microvolts: [1, 2], rate: 1)]))
        let recordLength = (bytes.count - 768) / 2
        #expect(bytes[(768 + 2)...].starts(with: "+0.345\u{14}\u{14}\u{0}".utf8))
        #expect(bytes[(768 + recordLength + 2)...].starts(with: "+1.345\u{14}\u{14}\u{0}".utf8))
    }

    @Test func valuesBeyondTheRangeAreClipped() throws {
        let signal = EDFSignal(
            label: "ACC X", physicalDimension: "mG", physicalMinimum: -2000, physicalMaximum: 2000,
            samplesPerRecord: 4, samples: [-5000, 5000, .nan, 1000])
        let bytes = try EDFWriter.bytes(EDFFile(start: Self.start, signals: [signal]))
        let digital = (0..<4).map {
            Int16(bitPattern: UInt16(bytes[768 + 2 * $0]) | UInt16(bytes[768 + 2 * $0 + 1]) << 8)
        }
        #expect(digital == [-32768, 32767, -32768, 16383])
    }

    @Test func filesThatCannotBeWritten() {
        let ok = EDFSignal.ecg(microvolts: [1], rate: 130)
        var flat = ok
        flat.physicalMaximum = flat.physicalMinimum
        var digital = ok
        digital.digitalMaximum = 40000
        var rate = ok
        rate.samplesPerRecord = 0
        for (signals, code) in [
            ([flat], EDFError.Code.badPhysicalRange), ([digital], .badDigitalRange),
            ([rate], .badSampleCount),
            ([], .badSignalCount), ([EDFSignal.ecg(microvolts: [], rate: 130)], .noSamples),
        ] {
            #expect(throws: EDFError.self) {
                try EDFWriter.bytes(EDFFile(start: Self.start, signals: signals))
            }
            do { _ = try EDFWriter.bytes(EDFFile(start: Self.start, signals: signals)) } catch {
                #expect(error.code == code)
            }
        }
        var early = Self.start
        early.year = 1984
        #expect(throws: EDFError.self) { try EDFWriter.bytes(EDFFile(start: early, signals: [ok])) }
    }

    @Test func numbersInEightCharacters() throws {
        #expect(try EDFWriter.number(-32768, "") == "-32768")
        #expect(try EDFWriter.number(0.5, "") == "0.5")
        #expect(try EDFWriter.number(-1234.56789, "") == "-1234.57")
        #expect(try EDFWriter.number(-0.0000001, "") == "0")
        #expect(throws: EDFError.self) { try EDFWriter.number(1e12, "") }
        #expect(EDFWriter.seconds(0) == "+0" && EDFWriter.seconds(1_250_000_000) == "+1.25")
        #expect(EDFWriter.seconds(-500_000_000) == "-0.5" && EDFWriter.seconds(7) == "+0.000000007")
    }

    @Test func datesFromUnixTime() {
        let date = EDFDateTime(unixNanoseconds: 1_795_681_805_250_000_000)
        #expect(
            date
                == EDFDateTime(
                    year: 2026, month: 11, day: 26, hour: 8, minute: 30, second: 5, nanosecond: 250_000_000))
        #expect(
            EDFDateTime(unixNanoseconds: 0)
                == EDFDateTime(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0))
        #expect(EDFDateTime(unixNanoseconds: 951_782_400_000_000_000).day == 29)  // 2000-02-29
    }

    @Test func streamedAsRecords() throws {
        var calls: [Int] = []
        try EDFWriter.write(
            EDFFile(
                start: Self.start, signals: [.ecg(microvolts: Array(repeating: 0, count: 390), rate: 130)])
        ) {
            calls.append($0.count)
        }
        #expect(calls.count == 4)
        #expect(calls[0] == 768)
        #expect(Set(calls.dropFirst()).count == 1)
    }
}
