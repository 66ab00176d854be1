import Monitor

/// One heart-rate session as a TCX activity: what `TCXWriter` needs, nothing it has to compute.
package struct TCXActivity: Sendable, Equatable {
    /// One second of connected time.
    package struct Trackpoint: Sendable, Equatable {
        /// Milliseconds since 1970-01-01T00:00:00Z.
        package var time: Int64
        package var bpm: Int

        package init(time: Int64, bpm: Int) {
            self.time = time
            self.bpm = bpm
        }
    }

    /// The session's start, milliseconds since 1970-01-01T00:00:00Z: the activity's Id and the
    /// lap's StartTime.
    package var start: Int64
    /// TCX's `Sport_t`: `Running`, `Biking` or `Other` (anything else is written as `Other`).
    package var sport: String
    /// One per second of connected time, in time order. Where the session dropped there are
    /// none; two trackpoints further apart than `trackBreakMilliseconds` start a new `<Track>`.
    package var trackpoints: [Trackpoint]
    /// The timer time: seconds with a link.
    package var totalSeconds: Double
    package var averageBPM: Int?
    package var maximumBPM: Int?
    package var calories: Int = 0
    /// Free text for the activity's `<Notes>` (the strap's name, say); nil for none.
    package var notes: String? = nil
    /// Trackpoints further apart than this are on either side of a gap: a new `<Track>` starts.
    package var trackBreakMilliseconds: Int64 = 1500

    package init(
        start: Int64, sport: String, trackpoints: [Trackpoint], totalSeconds: Double, averageBPM: Int?,
        maximumBPM: Int?, calories: Int = 0, notes: String? = nil
    ) {
        self.start = start
        self.sport = sport
        self.trackpoints = trackpoints
        self.totalSeconds = totalSeconds
        self.averageBPM = averageBPM
        self.maximumBPM = maximumBPM
        self.calories = calories
        self.notes = notes
    }
}

/// Garmin's Training Center Database v2 (TCX), as `../shared/specs/TrainingCenterDatabasev2.xsd`
/// defines it: one Activity with one Lap, and a Track per stretch of connected time (a Track
/// needs at least one Trackpoint, so a gap is where one Track ends and the next begins). Pure
/// Swift, no Foundation.
package enum TCXWriter {
    package static let namespace = "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"
    package static let sports: Set<String> = ["Running", "Biking", "Other"]

    package static func document(_ activity: TCXActivity) -> String {
        let sport = sports.contains(activity.sport) ? activity.sport : "Other"
        let start = time(activity.start)
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += #"<TrainingCenterDatabase xmlns="\#(namespace)">"# + "\n"
        xml += "  <Activities>\n"
        xml += #"    <Activity Sport="\#(escape(sport))">"# + "\n"
        xml += "      <Id>\(start)</Id>\n"
        xml += #"      <Lap StartTime="\#(start)">"# + "\n"
        xml += "        <TotalTimeSeconds>\(decimal(activity.totalSeconds))</TotalTimeSeconds>\n"
        xml += "        <DistanceMeters>0</DistanceMeters>\n"
        xml += "        <Calories>\(min(max(activity.calories, 0), Int(UInt16.max)))</Calories>\n"
        if let average = activity.averageBPM.flatMap(heartRate) {
            xml += "        <AverageHeartRateBpm><Value>\(average)</Value></AverageHeartRateBpm>\n"
        }
        if let maximum = activity.maximumBPM.flatMap(heartRate) {
            xml += "        <MaximumHeartRateBpm><Value>\(maximum)</Value></MaximumHeartRateBpm>\n"
        }
        xml += "        <Intensity>Active</Intensity>\n"
        xml += "        <TriggerMethod>Manual</TriggerMethod>\n"
        for track in tracks(activity) {
            xml += "        <Track>\n"
            for point in track {
                xml += "          <Trackpoint>\n"
                xml += "            <Time>\(time(point.time))</Time>\n"
                xml += "            <HeartRateBpm><Value>\(point.bpm)</Value></HeartRateBpm>\n"
                xml += "          </Trackpoint>\n"
            }
            xml += "        </Track>\n"
        }
        xml += "      </Lap>\n"
        if let notes = activity.notes {
            xml += "      <Notes>\(escape(notes))</Notes>\n"
        }
        xml += "    </Activity>\n"
        xml += "  </Activities>\n"
        xml += "</TrainingCenterDatabase>\n"
        return xml
    }

    /// The trackpoints in runs without a gap, each run non-empty. Samples of 0 bpm (no contact)
    /// have no trackpoint (the schema's heart rate is 1-255) but do not break a run; one above
    /// 255 is written as 255.
    package static func tracks(_ activity: TCXActivity) -> [[TCXActivity.Trackpoint]] {
        var tracks: [[TCXActivity.Trackpoint]] = []
        var current: [TCXActivity.Trackpoint] = []
        var previous: Int64? = nil
        for point in activity.trackpoints {
            if let previous, point.time &- previous > activity.trackBreakMilliseconds, !current.isEmpty {
                tracks.append(current)
                current = []
            }
            previous = point.time
            if let bpm = heartRate(point.bpm) { current.append(.init(time: point.time, bpm: bpm)) }
        }
        if !current.isEmpty { tracks.append(current) }
        return tracks
    }

    /// A heart rate as the schema's `positiveByte`: nil for 0 or less, at most 255.
    package static func heartRate(_ bpm: Int) -> Int? {
        bpm >= 1 ? min(bpm, 255) : nil
    }

    /// `2026-11-23T15:42:02.300Z`.
    package static func time(_ millisecondsSinceEpoch: Int64) -> String {
        Timestamp(millisecondsSinceEpoch: millisecondsSinceEpoch).description
    }

    /// An `xsd:double` to the millisecond: `12.5`, `3600`; 0 for what is not a finite number of
    /// seconds at or above 0.
    package static func decimal(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 1e12 else { return "0" }
        let millis = Int64((seconds * 1000).rounded())
        let whole = millis / 1000
        var fraction = millis % 1000
        guard fraction != 0 else { return "\(whole)" }
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let text = "\(fraction)"
        return "\(whole)." + String(repeating: "0", count: digits - text.count) + text
    }

    /// Text and attribute values: `&`, `<`, `>`, `"` and `'` as entities; characters XML 1.0
    /// cannot carry at all (most C0 controls, U+FFFE, U+FFFF) as U+FFFD.
    package static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\r": result += "&#13;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
