/// Encodes a heart-rate-only `FITActivity` as a FIT activity file, which Garmin Connect, Strava
/// and intervals.icu import.
///
/// ## The file
///
/// FIT protocol 2.0, fields checked against the FIT SDK's profile 21.218 (`garmin_fit_sdk`'s
/// `profile.py`). A 14-byte header (size 14, protocol 0x20, profile 21218, the records' size,
/// ".FIT", the CRC of those 12 bytes), the records, then the CRC-16 of everything before it
/// (`FITCRC`). Every record has a normal header; each message type has its own local message type
/// (0 to 6), defined once, just before its first data message, little-endian. Optional fields
/// that the activity lacks (serial number, average and maximum heart rate) are left out of the
/// definition rather than written as "no value".
///
/// Messages, in this order (global message number; field number, base type, scale):
///
/// | message | fields |
/// | --- | --- |
/// | file_id (0), local 0 | type 0 enum = activity (4); manufacturer 1 uint16 = development (255); product 2 uint16 = 0; time_created 4 uint32 = the start; serial_number 3 uint32z, if given |
/// | event (21), local 1 | timestamp 253 uint32; event 0 enum = timer (0); event_type 1 enum = start (0) at each segment's start, stop_all (4) at its end |
/// | record (20), local 2 | timestamp 253 uint32; heart_rate 3 uint8 (bpm): one per sample |
/// | hrv (78), local 3 | time 0 uint16[5], scale 1000 (ms): every RR interval in order, five a message, the last padded with 0xFFFF ("no value") |
/// | lap (19), local 4 | timestamp 253, start_time 2 (uint32); total_elapsed_time 7, total_timer_time 8 (uint32, scale 1000); avg_heart_rate 15, max_heart_rate 16 (uint8); event 0 = lap (9), event_type 1 = stop (1) |
/// | session (18), local 5 | timestamp 253, start_time 2; total_elapsed_time 7, total_timer_time 8; sport 5 enum; sub_sport 6 enum = generic (0); avg_heart_rate 16, max_heart_rate 17; first_lap_index 25 = 0, num_laps 26 = 1 (uint16); event 0 = session (8), event_type 1 = stop (1) |
/// | activity (34), local 6 | timestamp 253; total_timer_time 0 (scale 1000); num_sessions 1 uint16 = 1; type 2 enum = manual (0); event 3 = activity (26), event_type 4 = stop (1) |
///
/// The timer events and the records are written in time order, as FIT readers expect: a segment's
/// start event before the samples at or after it, its stop event after the samples up to it. So
/// a drop reads as stop, start, and the time between is not timer time. The hrv messages have no
/// timestamp (readers join them in order), so they follow the records as one block. The summary
/// messages come last, one lap covering the whole session, as a device writes them when it stops.
///
/// ## Times
///
/// FIT `date_time`s are whole seconds since 1989-12-31T00:00:00Z (`FITTime`): sample and event
/// times are rounded down to the second. Durations are uint32 milliseconds (scale 1000), exact:
/// total_timer_time is the segments' lengths added up, total_elapsed_time runs from the start to
/// the end (the latest of the last segment's end and the last sample). The lap's, session's and
/// activity's timestamp is the end.
///
/// ## What is left out
///
/// - activity's local_timestamp: it needs the time zone's offset, which this module (no
///   Foundation) does not know. Importers take the zone from the position or the account.
/// - device_info and file_creator: optional, and hrm has no FIT product number.
/// - total_distance and the other fields a heart-rate strap cannot measure.
///
/// ## RR intervals that cannot be written
///
/// An hrv value is a uint16 of milliseconds and 0xFFFF means "no value", so RR intervals above
/// 65.534 s are written as 65.534 s (a beat that long is an artefact; clamping keeps the count
/// and order of beats). Intervals that are not finite or are negative are skipped: there is no
/// value to write, and an invalid marker in the middle would read as padding.
public enum FITEncoder {
    /// FIT global message numbers.
    enum Global {
        static let fileID: UInt16 = 0
        static let session: UInt16 = 18
        static let lap: UInt16 = 19
        static let record: UInt16 = 20
        static let event: UInt16 = 21
        static let activity: UInt16 = 34
        static let hrv: UInt16 = 78
    }

    /// The local message type of each message in this file.
    enum Local {
        static let fileID: UInt8 = 0
        static let event: UInt8 = 1
        static let record: UInt8 = 2
        static let hrv: UInt8 = 3
        static let lap: UInt8 = 4
        static let session: UInt8 = 5
        static let activity: UInt8 = 6
    }

    /// Values of the profile's enums that the file uses.
    enum Value {
        static let fileActivity: UInt8 = 4
        static let manufacturerDevelopment: UInt16 = 255
        static let eventTimer: UInt8 = 0
        static let eventSession: UInt8 = 8
        static let eventLap: UInt8 = 9
        static let eventActivity: UInt8 = 26
        static let eventTypeStart: UInt8 = 0
        static let eventTypeStop: UInt8 = 1
        static let eventTypeStopAll: UInt8 = 4
        static let subSportGeneric: UInt8 = 0
        static let activityManual: UInt8 = 0
    }

    /// RR intervals per hrv message: the size of its `time` array.
    static let rrPerHRVMessage = 5
    /// The largest RR interval an hrv value can hold, in milliseconds (0xFFFF is "no value").
    static let largestRR: UInt16 = 0xFFFE

    /// The FIT file of `activity`.
    public static func encode(_ activity: FITActivity) -> [UInt8] {
        // About 7 bytes a record and 11 an hrv message: one allocation for most files.
        var writer = FITWriter(
            reservingCapacity: 256 + 8 * activity.samples.count + 3 * activity.rrSeconds.count
                + 16 * activity.segments.count)
        let start = FITTime.timestamp(unixMilliseconds: activity.start)
        let end = FITTime.timestamp(unixMilliseconds: activity.end)
        let elapsed = FITTime.duration(milliseconds: activity.elapsedMilliseconds)
        let timer = FITTime.duration(milliseconds: activity.timerMilliseconds)

        writer.write(fileID(activity, created: start))
        writeTimeline(activity, to: &writer)
        for values in hrvValues(activity.rrSeconds) {
            writer.write(
                FITMessage(
                    global: Global.hrv, local: Local.hrv,
                    fields: [FITField(number: 0, value: .uint16Array(values))]
                ))
        }

        // avg_heart_rate and max_heart_rate: lap 15 and 16, session 16 and 17.
        func heartRate(average: UInt8, maximum: UInt8) -> [FITField] {
            var fields: [FITField] = []
            if let value = activity.averageHeartRate {
                fields.append(FITField(number: average, value: .uint8(value)))
            }
            if let value = activity.maximumHeartRate {
                fields.append(FITField(number: maximum, value: .uint8(value)))
            }
            return fields
        }

        writer.write(
            FITMessage(
                global: Global.lap, local: Local.lap,
                fields: [
                    FITField(number: 253, value: .uint32(end)),
                    FITField(number: 2, value: .uint32(start)),
                    FITField(number: 7, value: .uint32(elapsed)),
                    FITField(number: 8, value: .uint32(timer)),
                ] + heartRate(average: 15, maximum: 16) + [
                    FITField(number: 0, value: .enumeration(Value.eventLap)),
                    FITField(number: 1, value: .enumeration(Value.eventTypeStop)),
                ]))
        writer.write(
            FITMessage(
                global: Global.session, local: Local.session,
                fields: [
                    FITField(number: 253, value: .uint32(end)),
                    FITField(number: 2, value: .uint32(start)),
                    FITField(number: 7, value: .uint32(elapsed)),
                    FITField(number: 8, value: .uint32(timer)),
                    FITField(number: 5, value: .enumeration(activity.sport.rawValue)),
                    FITField(number: 6, value: .enumeration(Value.subSportGeneric)),
                ] + heartRate(average: 16, maximum: 17) + [
                    FITField(number: 25, value: .uint16(0)),
                    FITField(number: 26, value: .uint16(1)),
                    FITField(number: 0, value: .enumeration(Value.eventSession)),
                    FITField(number: 1, value: .enumeration(Value.eventTypeStop)),
                ]))
        writer.write(
            FITMessage(
                global: Global.activity, local: Local.activity,
                fields: [
                    FITField(number: 253, value: .uint32(end)),
                    FITField(number: 0, value: .uint32(timer)),
                    FITField(number: 1, value: .uint16(1)),
                    FITField(number: 2, value: .enumeration(Value.activityManual)),
                    FITField(number: 3, value: .enumeration(Value.eventActivity)),
                    FITField(number: 4, value: .enumeration(Value.eventTypeStop)),
                ]))
        return writer.file()
    }

    static func fileID(_ activity: FITActivity, created: UInt32) -> FITMessage {
        var fields = [
            FITField(number: 0, value: .enumeration(Value.fileActivity)),
            FITField(number: 1, value: .uint16(Value.manufacturerDevelopment)),
            FITField(number: 2, value: .uint16(0)),
            FITField(number: 4, value: .uint32(created)),
        ]
        if let serial = activity.serialNumber { fields.append(FITField(number: 3, value: .uint32z(serial))) }
        return FITMessage(global: Global.fileID, local: Local.fileID, fields: fields)
    }

    /// The timer events and the records in time order: a start event before the samples at or
    /// after its time, a stop event after the samples at or before its time.
    static func writeTimeline(_ activity: FITActivity, to writer: inout FITWriter) {
        let samples = activity.samples
        var next = 0
        func writeSamples(while include: (Int64) -> Bool) {
            while next < samples.count, include(samples[next].time) {
                let sample = samples[next]
                writer.write(
                    FITMessage(
                        global: Global.record, local: Local.record,
                        fields: [
                            FITField(
                                number: 253, value: .uint32(FITTime.timestamp(unixMilliseconds: sample.time))),
                            FITField(number: 3, value: .uint8(sample.heartRate)),
                        ]))
                next += 1
            }
        }
        func writeEvent(at time: Int64, type: UInt8) {
            writer.write(
                FITMessage(
                    global: Global.event, local: Local.event,
                    fields: [
                        FITField(number: 253, value: .uint32(FITTime.timestamp(unixMilliseconds: time))),
                        FITField(number: 0, value: .enumeration(Value.eventTimer)),
                        FITField(number: 1, value: .enumeration(type)),
                    ]))
        }
        for segment in activity.segments {
            writeSamples { $0 < segment.lowerBound }
            writeEvent(at: segment.lowerBound, type: Value.eventTypeStart)
            writeSamples { $0 <= segment.upperBound }
            writeEvent(at: segment.upperBound, type: Value.eventTypeStopAll)
        }
        writeSamples { _ in true }
    }

    /// The RR intervals as hrv `time` arrays: milliseconds, five to an array, the last padded with
    /// 0xFFFF; see the type's documentation for the values that cannot be written.
    static func hrvValues(_ rrSeconds: [Double]) -> [[UInt16]] {
        var arrays: [[UInt16]] = []
        arrays.reserveCapacity(rrSeconds.count / rrPerHRVMessage + 1)
        var current: [UInt16] = []
        current.reserveCapacity(rrPerHRVMessage)
        for seconds in rrSeconds {
            guard let value = milliseconds(rr: seconds) else { continue }
            current.append(value)
            if current.count == rrPerHRVMessage {
                arrays.append(current)
                current.removeAll(keepingCapacity: true)
            }
        }
        if !current.isEmpty {
            while current.count < rrPerHRVMessage { current.append(0xFFFF) }
            arrays.append(current)
        }
        return arrays
    }

    /// `seconds` as an hrv value: rounded to the millisecond, at most 65,534; nil when not finite
    /// or negative.
    static func milliseconds(rr seconds: Double) -> UInt16? {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds < Double(largestRR) else { return largestRR }
        return UInt16(milliseconds)
    }
}
