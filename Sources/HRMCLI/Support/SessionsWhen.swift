import ArgumentParser
import SessionLibrary

/// `hrm sessions --since` and `--until`: a date, a time, or a time ago, as milliseconds since the
/// epoch.
enum SessionsWhen {
    /// `2026-01-01` (midnight UTC; with `endOfDay`, the next midnight: the day is included),
    /// `2026-01-01T06:00:00Z` (as recordings write times), or `30d`, `12h`, `2w`, `90m` before
    /// `now`.
    static func instant(_ text: String, now: Int64, endOfDay: Bool, option: String) throws(ValidationError)
        -> Int64
    {
        let day: Int64 = 86_400_000
        if let last = text.last,
            let unit = ["m": Int64(60_000), "h": 3_600_000, "d": day, "w": 7 * day][last],
            let count = Int64(text.dropLast()), count >= 0, count <= 100 * 366
        {
            return now - count * unit
        }
        if text.count == 10, let midnight = RecordedSession.milliseconds(text + "T00:00:00Z") {
            return endOfDay ? midnight + day : midnight
        }
        if let instant = RecordedSession.milliseconds(text) { return instant }
        throw ValidationError(
            "\(option) '\(text)': give a date (2026-01-01), a time (2026-01-01T06:00:00Z) or a time ago (30d, 12h, 2w)"
        )
    }
}
