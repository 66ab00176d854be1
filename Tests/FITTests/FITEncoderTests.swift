import Testing

@testable import FIT

@Suite struct FITEncoderTests {
    /// CRC-16/ARC's check value for "123456789" is 0xBB3D; garmin_fit_sdk's
    /// `CrcCalculator.calculate_crc(bytearray(b"123456789"), 0, 9)` gives the same.
    @Test func crcKnownVectors() {
        #expect(FITCRC.checksum(Array("123456789".utf8)) == 0xBB3D)
        #expect(FITCRC.checksum([UInt8]()) == 0)
        // Headers (profile 21.218 = 0x52E2), CRCs from garmin_fit_sdk's CrcCalculator over the
        // 12 bytes: data size 0 → 0x7ADC, data size 10,000 (0x2710) → 0x748A.
        #expect(FITCRC.checksum([14, 0x20, 0xE2, 0x52, 0, 0, 0, 0] + Array(".FIT".utf8)) == 0x7ADC)
        #expect(FITCRC.checksum([14, 0x20, 0xE2, 0x52, 0x10, 0x27, 0, 0] + Array(".FIT".utf8)) == 0x748A)
        // Byte by byte is the same as all at once.
        var crc = FITCRC()
        for byte in "123456789".utf8 { crc.update(byte) }
        #expect(crc.value == 0xBB3D)
    }

    @Test func headerBytes() {
        #expect(
            FITWriter.header(dataSize: 10_000) == [
                14, 0x20, 0xE2, 0x52, 0x10, 0x27, 0x00, 0x00, 0x2E, 0x46, 0x49, 0x54, 0x8A, 0x74,
            ])
    }

    /// The file's header says how many record bytes follow, and the CRC-16 of a whole file
    /// (its own CRC included) is 0, which is how FIT readers check it.
    @Test func fileFraming() throws {
        let file = FITEncoder.encode(TestSessions.session(connected: 120, dropAfter: 60))
        #expect(Array(file[8..<12]) == Array(".FIT".utf8))
        #expect(FITCRC.checksum(file[0..<12]) == UInt16(file[12]) | UInt16(file[13]) << 8)
        let dataSize = Int(file[4]) | Int(file[5]) << 8 | Int(file[6]) << 16 | Int(file[7]) << 24
        #expect(file.count == 14 + dataSize + 2)
        #expect(FITCRC.checksum(file) == 0)
    }

    @Test func timestamps() {
        // The FIT epoch, 1989-12-31T00:00:00Z: 7,304 days (20 years with 5 leap days, less one
        // day) after the Unix epoch, 7,304 × 86,400 = 631,065,600 s.
        #expect(FITTime.epochOffset == 7_304 * 86_400)
        #expect(FITTime.timestamp(unixMilliseconds: 631_065_600_000) == 0)
        // 2024-01-01T00:00:00Z is Unix 1,704,067,200: FIT 1,073,001,600, to the end of that second.
        #expect(FITTime.timestamp(unixMilliseconds: 1_704_067_200_000) == 1_073_001_600)
        #expect(FITTime.timestamp(unixMilliseconds: 1_704_067_200_999) == 1_073_001_600)
        #expect(FITTime.timestamp(unixMilliseconds: 1_704_067_201_000) == 1_073_001_601)
        // Outside FIT's range: clamped, never a trap.
        #expect(FITTime.timestamp(unixMilliseconds: -1) == 0)
        #expect(FITTime.timestamp(unixMilliseconds: .min) == 0)
        #expect(FITTime.timestamp(unixMilliseconds: .max) == FITTime.latest)
        #expect(FITTime.timestamp(unixMilliseconds: (631_065_600 + 0xFFFF_FFFF) * 1000) == FITTime.latest)
        #expect(FITTime.duration(milliseconds: -5) == 0)
        #expect(FITTime.duration(milliseconds: 3_723_456) == 3_723_456)
        #expect(FITTime.duration(milliseconds: .max) == 0xFFFF_FFFE)
    }

    /// 7 RR intervals: two hrv messages, five values then two and three 0xFFFF.
    @Test func hrvPadding() throws {
        let rr = [0.8, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86]
        let file = FITEncoder.encode(FITActivity(start: TestSessions.start, rrSeconds: rr))
        let hrv = try FITReader(file).messages(78)
        #expect(hrv.count == 2)
        #expect(hrv.first?.uint16s(0) == [800, 810, 820, 830, 840])
        #expect(hrv.last?.uint16s(0) == [850, 860, 0xFFFF, 0xFFFF, 0xFFFF])
        // Five exactly: one message, no padding; none: no hrv message at all.
        #expect(FITEncoder.hrvValues(Array(rr.prefix(5))) == [[800, 810, 820, 830, 840]])
        #expect(FITEncoder.hrvValues([]).isEmpty)
    }

    /// Above 65.534 s: clamped; not finite or negative: skipped; rounded to the millisecond.
    @Test func rrValuesThatCannotBeWritten() {
        #expect(
            FITEncoder.hrvValues([0.8004, 70, .nan, -0.5, .infinity, 65.534, 65.5345, 0, 1.2346]) == [
                [800, 65_534, 65_534, 65_534, 0], [1_235, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF],
            ])
    }

    /// No samples, no RR, no segments: still a FIT file, with the summary messages.
    @Test func emptySession() throws {
        let file = FITEncoder.encode(FITActivity(start: TestSessions.start))
        #expect(FITCRC.checksum(file) == 0)
        let reader = try FITReader(file)
        #expect(reader.messages.map(\.global) == [0, 19, 18, 34])
        let session = try #require(reader.messages(18).first)
        #expect(session.uint(7) == 0)
        #expect(session.uint(8) == 0)
        #expect(session.uint(2) == UInt64(FITTime.timestamp(unixMilliseconds: TestSessions.start)))
        #expect(session.bytes(16) == nil && session.bytes(17) == nil)
        #expect(reader.messages(0).first?.bytes(3) == nil)
    }

    /// Definitions once per message type, just before its first data message; timer events around
    /// the records in time order; hrv, lap, session, activity last.
    @Test func messageOrder() throws {
        let activity = TestSessions.session(connected: 20, dropAfter: 10)
        let reader = try FITReader(FITEncoder.encode(activity))
        #expect(reader.definitions.map(\.global) == [0, 21, 20, 78, 19, 18, 34])
        #expect(reader.definitions.map(\.local) == [0, 1, 2, 3, 4, 5, 6])
        let kinds = reader.messages.map { message in
            message.global == 21 ? (message.uint(1) == 0 ? "start" : "stop") : "\(message.global)"
        }
        let hrvCount = (activity.rrSeconds.count + 4) / 5
        let records = Array(repeating: "20", count: 10)
        #expect(
            kinds == ["0", "start"] + records + ["stop", "start"] + records + ["stop"]
                + Array(repeating: "78", count: hrvCount) + ["19", "18", "34"])
    }

    @Test func fields() throws {
        let activity = TestSessions.session(connected: 20, dropAfter: 10, dropSeconds: 30, sport: .cycling)
        let reader = try FITReader(FITEncoder.encode(activity))
        let start = UInt64(FITTime.timestamp(unixMilliseconds: TestSessions.start))

        let fileID = try #require(reader.messages(0).first)
        #expect(fileID.uint(0) == 4)
        #expect(fileID.uint(1) == 255)
        #expect(fileID.uint(2) == 0)
        #expect(fileID.uint(3) == 123_456_789)
        #expect(fileID.uint(4) == start)

        let records = reader.messages(20)
        #expect(records.compactMap { $0.uint(3) } == activity.samples.map { UInt64($0.heartRate) })
        // Samples at .650 of each second (start .250 + 400 ms): rounded down; the drop's 30 s show.
        #expect(records.first?.uint(253) == start)
        #expect(records.last?.uint(253) == start + 19 + 30)

        let events = reader.messages(21)
        #expect(events.map { $0.uint(253) } == [start, start + 10, start + 40, start + 50])
        #expect(events.allSatisfy { $0.uint(0) == 0 })
        #expect(events.map { $0.uint(1) } == [0, 4, 0, 4])

        // 20 s connected out of 50 s: exact milliseconds.
        for (global, average, maximum) in [(UInt16(19), UInt8(15), UInt8(16)), (18, 16, 17)] {
            let message = try #require(reader.messages(global).first)
            #expect(message.uint(253) == start + 50)
            #expect(message.uint(2) == start)
            #expect(message.uint(7) == 50_000)
            #expect(message.uint(8) == 20_000)
            #expect(message.uint(average) == activity.averageHeartRate.map(UInt64.init))
            #expect(message.uint(maximum) == activity.maximumHeartRate.map(UInt64.init))
        }
        let lap = try #require(reader.messages(19).first)
        #expect(lap.uint(0) == 9 && lap.uint(1) == 1)
        let session = try #require(reader.messages(18).first)
        #expect(session.uint(5) == 2 && session.uint(6) == 0)
        #expect(session.uint(25) == 0 && session.uint(26) == 1)
        #expect(session.uint(0) == 8 && session.uint(1) == 1)
        let summary = try #require(reader.messages(34).first)
        #expect(summary.uint(253) == start + 50)
        #expect(summary.uint(0) == 20_000)
        #expect(summary.uint(1) == 1 && summary.uint(2) == 0)
        #expect(summary.uint(3) == 26 && summary.uint(4) == 1)

        let rr = reader.messages(78).flatMap { $0.uint16s(0) ?? [] }.filter { $0 != 0xFFFF }
        #expect(rr == activity.rrSeconds.map { UInt16(($0 * 1000).rounded()) })
    }

    @Test func sports() {
        #expect(FITActivity.Sport(name: "running") == .running)
        #expect(FITActivity.Sport(name: "fitness_equipment") == .fitnessEquipment)
        #expect(FITActivity.Sport(name: "fitness-equipment") == .fitnessEquipment)
        #expect(FITActivity.Sport(name: "Running") == nil)
        #expect(FITActivity.Sport(name: "") == nil)
        #expect(FITActivity.Sport.generic.rawValue == 0)
        #expect(FITActivity.Sport.training.rawValue == 10)
        #expect(FITActivity.Sport.walking.rawValue == 11)
        #expect(FITActivity.Sport.fitnessEquipment.rawValue == 4)
        for sport in FITActivity.Sport.allCases { #expect(FITActivity.Sport(name: sport.name) == sport) }
    }

    /// Three hours at 1 Hz with every beat (about 21,600 at 120 bpm, more than the 12,000 of a
    /// resting session): prints how long encoding takes; not a timed test.
    @Test func largeSession() throws {
        let activity = TestSessions.session(connected: 3 * 3600, dropAfter: 5400)
        let clock = ContinuousClock()
        var file: [UInt8] = []
        let elapsed = clock.measure { file = FITEncoder.encode(activity) }
        print(
            "FIT: 3 h session (\(activity.samples.count) records, \(activity.rrSeconds.count) RR intervals) "
                + "encoded in \(elapsed) to \(file.count) bytes")
        let reader = try FITReader(file)
        #expect(reader.messages(20).count == 3 * 3600)
        #expect(FITCRC.checksum(file) == 0)
    }
}
