/// A heart-rate-only session as `FITEncoder` writes it: what `hrm export` gathers from a recording.
/// Times are milliseconds since the Unix epoch (UTC), as hrm records them; the encoder converts
/// them to FIT timestamps (`FITTime`).
public struct FITActivity: Sendable {
    /// One heart rate at one time: the latest measurement of one second of connected time.
    public struct Sample: Sendable, Equatable {
        /// Milliseconds since the Unix epoch, UTC.
        public var time: Int64
        /// Beats per minute. 255 is FIT's "no value" for a uint8 and reads as missing.
        public var heartRate: UInt8

        /// A heart rate of `heartRate` bpm at `time` (milliseconds since the Unix epoch).
        public init(time: Int64, heartRate: UInt8) {
            self.time = time
            self.heartRate = heartRate
        }
    }

    /// FIT's `sport` values (the profile's `sport` enum) that a heart-rate-only session can be.
    public enum Sport: UInt8, Sendable, CaseIterable {
        /// `generic` (0): no particular sport, the default.
        case generic = 0
        /// `running` (1).
        case running = 1
        /// `cycling` (2).
        case cycling = 2
        /// `fitness_equipment` (4): a machine indoors (treadmill, trainer, rower).
        case fitnessEquipment = 4
        /// `swimming` (5).
        case swimming = 5
        /// `training` (10).
        case training = 10
        /// `walking` (11).
        case walking = 11
        /// `cross_country_skiing` (12).
        case crossCountrySkiing = 12
        /// `rowing` (15).
        case rowing = 15
        /// `hiking` (17).
        case hiking = 17
        /// `paddling` (19).
        case paddling = 19
        /// `e_biking` (21).
        case eBiking = 21

        /// The profile's name: lower case, words joined by `_` (`fitness_equipment`).
        public var name: String {
            switch self {
            case .generic: "generic"
            case .running: "running"
            case .cycling: "cycling"
            case .fitnessEquipment: "fitness_equipment"
            case .swimming: "swimming"
            case .training: "training"
            case .walking: "walking"
            case .crossCountrySkiing: "cross_country_skiing"
            case .rowing: "rowing"
            case .hiking: "hiking"
            case .paddling: "paddling"
            case .eBiking: "e_biking"
            }
        }

        /// The sport called `name`: the profile's name, with `-` accepted for `_`
        /// (`fitness-equipment`); nil for any other name (upper case included).
        public init?(name: String) {
            let profileName = String(name.map { $0 == "-" ? "_" : $0 })
            guard let sport = Self.allCases.first(where: { $0.name == profileName }) else { return nil }
            self = sport
        }
    }

    /// Milliseconds since the Unix epoch: when the session started.
    public var start: Int64
    /// One per second of connected time, in order.
    public var samples: [Sample]
    /// Every RR interval of the session in order, in seconds.
    public var rrSeconds: [Double]
    /// The connected periods in order (milliseconds since the Unix epoch): the timer starts at each
    /// lower bound and stops at each upper bound, so a drop is a stop then a start.
    public var segments: [ClosedRange<Int64>]
    /// The session message's sport (its sub-sport is always generic); `.generic` by default.
    public var sport: Sport
    /// Average heart rate in bpm, written to the lap and the session; nil leaves it out.
    public var averageHeartRate: UInt8?
    /// Maximum heart rate in bpm, written to the lap and the session; nil leaves it out.
    public var maximumHeartRate: UInt8?
    /// The file_id's serial number; nil leaves it out. 0 is uint32z's "no value" and reads as missing.
    public var serialNumber: UInt32?

    /// A session that started at `start` (milliseconds since the Unix epoch); everything else is optional.
    public init(
        start: Int64, samples: [Sample] = [], rrSeconds: [Double] = [],
        segments: [ClosedRange<Int64>] = [], sport: Sport = .generic, averageHeartRate: UInt8? = nil,
        maximumHeartRate: UInt8? = nil, serialNumber: UInt32? = nil
    ) {
        self.start = start
        self.samples = samples
        self.rrSeconds = rrSeconds
        self.segments = segments
        self.sport = sport
        self.averageHeartRate = averageHeartRate
        self.maximumHeartRate = maximumHeartRate
        self.serialNumber = serialNumber
    }

    /// When the session ended: the latest of its start, the last segment's end and the last sample.
    public var end: Int64 {
        max(start, segments.last?.upperBound ?? start, samples.last?.time ?? start)
    }

    /// The connected time in milliseconds: the segments' lengths added up (saturating).
    public var timerMilliseconds: Int64 {
        var total: Int64 = 0
        for segment in segments {
            let (length, lengthOverflow) = segment.upperBound.subtractingReportingOverflow(segment.lowerBound)
            let (sum, sumOverflow) = total.addingReportingOverflow(length)
            guard !lengthOverflow, !sumOverflow else { return .max }
            total = sum
        }
        return total
    }

    /// From start to end in milliseconds (saturating).
    public var elapsedMilliseconds: Int64 {
        let (elapsed, overflow) = end.subtractingReportingOverflow(start)
        return overflow ? .max : elapsed
    }
}
