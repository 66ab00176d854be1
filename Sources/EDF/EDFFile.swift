/// One signal of an EDF+ file: its header fields and its samples.
///
/// Samples are physical values (microvolts, milli-g); the writer maps them to 16-bit digital
/// values linearly, `physicalMinimum...physicalMaximum` onto `digitalMinimum...digitalMaximum`, as
/// readers map them back. Values beyond the physical range are clipped to it.
public struct EDFSignal: Hashable, Sendable {
    /// The label (16 characters at most): "ECG", "ACC X".
    public var label: String
    /// The transducer (80 characters at most): "Polar H10 chest strap electrodes".
    public var transducer: String
    /// The physical dimension (8 characters at most): "uV", "mG".
    public var physicalDimension: String
    /// The physical value of `digitalMinimum`.
    public var physicalMinimum: Double
    /// The physical value of `digitalMaximum`.
    public var physicalMaximum: Double
    /// The smallest digital value (-32768 or more).
    public var digitalMinimum: Int
    /// The largest digital value (32767 or less).
    public var digitalMaximum: Int
    /// The filtering done before (80 characters at most): "HP:0.5Hz", or empty.
    public var prefiltering: String
    /// Samples in each data record: the rate times the record's duration.
    public var samplesPerRecord: Int
    /// The samples, physical values, the first at the file's start.
    public var samples: [Double]

    /// A signal with every field given.
    public init(
        label: String, transducer: String = "", physicalDimension: String, physicalMinimum: Double,
        physicalMaximum: Double, digitalMinimum: Int = -32768, digitalMaximum: Int = 32767,
        prefiltering: String = "",
        samplesPerRecord: Int, samples: [Double]
    ) {
        self.label = label
        self.transducer = transducer
        self.physicalDimension = physicalDimension
        self.physicalMinimum = physicalMinimum
        self.physicalMaximum = physicalMaximum
        self.digitalMinimum = digitalMinimum
        self.digitalMaximum = digitalMaximum
        self.prefiltering = prefiltering
        self.samplesPerRecord = samplesPerRecord
        self.samples = samples
    }

    /// An ECG in whole microvolts at `rate` Hz (one-second records): "ECG", "uV", one digital
    /// step per microvolt over ±32.767 mV, so whole microvolts are kept exactly (an H10's ECG
    /// stays within a few millivolts).
    public static func ecg(
        microvolts: [Int32], rate: Int, transducer: String = "Polar H10 chest strap electrodes"
    ) -> EDFSignal {
        EDFSignal(
            label: "ECG", transducer: transducer, physicalDimension: "uV", physicalMinimum: -32768,
            physicalMaximum: 32767, samplesPerRecord: rate, samples: microvolts.map { Double($0) })
    }

    /// One axis of acceleration in whole milli-g at `rate` Hz: "ACC X" (or Y, Z), "mG", one digital
    /// step per milli-g over ±32.767 g (every range a Polar sensor offers, kept exactly).
    public static func acceleration(
        axis: String, milliG: [Int32], rate: Int, transducer: String = "Polar H10 accelerometer"
    ) -> EDFSignal {
        EDFSignal(
            label: "ACC \(axis)", transducer: transducer, physicalDimension: "mG", physicalMinimum: -32768,
            physicalMaximum: 32767, samplesPerRecord: rate, samples: milliG.map { Double($0) })
    }
}

/// An annotation: an event at a time, optionally lasting, with a text ("R", "strap disconnected").
public struct EDFAnnotation: Hashable, Sendable {
    /// When, in nanoseconds after the file's start (its first data record).
    public var onset: Int64
    /// How long, in nanoseconds (nil for an instant).
    public var duration: Int64?
    /// What (UTF-8; the characters EDF+ reserves, 0x00, 0x14 and 0x15, become spaces).
    public var text: String

    /// An annotation at `onset` lasting `duration`.
    public init(onset: Int64, duration: Int64? = nil, text: String) {
        self.onset = onset
        self.duration = duration
        self.text = text
    }
}

/// A calendar date and time of day, in the recording's local time as EDF has it.
public struct EDFDateTime: Hashable, Sendable {
    /// The year (1985 to 2084 in EDF's two digits; later ones are written in the recording field).
    public var year: Int
    /// 1 to 12.
    public var month: Int
    /// 1 to 31.
    public var day: Int
    /// 0 to 23.
    public var hour: Int
    /// 0 to 59.
    public var minute: Int
    /// 0 to 59.
    public var second: Int
    /// Nanoseconds past the second (0 to 999,999,999): the first record's time-keeping annotation
    /// carries them, EDF+'s way of starting between seconds.
    public var nanosecond: Int

    /// The date and time given.
    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, nanosecond: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.nanosecond = nanosecond
    }

    /// The time `unixNanoseconds` after 1970-01-01T00:00:00 (UTC, or local time when the caller
    /// adds its offset first).
    public init(unixNanoseconds: Int64) {
        let secondsTotal =
            unixNanoseconds >= 0 ? unixNanoseconds / 1_000_000_000 : (unixNanoseconds + 1) / 1_000_000_000 - 1
        nanosecond = Int(unixNanoseconds - secondsTotal * 1_000_000_000)
        var days = secondsTotal >= 0 ? secondsTotal / 86_400 : (secondsTotal + 1) / 86_400 - 1
        let secondOfDay = Int(secondsTotal - days * 86_400)
        hour = secondOfDay / 3600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
        // Howard Hinnant's days-to-civil.
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
    }
}

/// Who was recorded, as EDF+'s local patient identification has it; nil fields are written "X"
/// (unknown), as the standard asks.
public struct EDFPatient: Hashable, Sendable {
    /// The hospital's code for the patient.
    public var code: String?
    /// "F" or "M".
    public var sex: String?
    /// The date of birth (its time of day unused).
    public var birthdate: EDFDateTime?
    /// The name.
    public var name: String?

    /// A patient with the fields given.
    public init(code: String? = nil, sex: String? = nil, birthdate: EDFDateTime? = nil, name: String? = nil) {
        self.code = code
        self.sex = sex
        self.birthdate = birthdate
        self.name = name
    }

    /// Nothing known: "X X X X".
    public static let anonymous = EDFPatient()
}

/// Everything an EDF+C file holds: who, when, with what, the signals and the annotations.
public struct EDFFile: Hashable, Sendable {
    /// Who was recorded.
    public var patient: EDFPatient
    /// When the first data record starts.
    public var start: EDFDateTime
    /// The hospital administration code of the investigation (nil: "X").
    public var administrationCode: String?
    /// Who made the recording (nil: "X").
    public var technician: String?
    /// What made it (nil: "X"): "hrm_Polar_H10".
    public var equipment: String?
    /// The signals (not the annotations: the writer adds "EDF Annotations").
    public var signals: [EDFSignal]
    /// The annotations, written into the data record their onset falls in.
    public var annotations: [EDFAnnotation]

    /// A file of `signals` and `annotations` starting at `start`.
    public init(
        patient: EDFPatient = .anonymous, start: EDFDateTime, administrationCode: String? = nil,
        technician: String? = nil, equipment: String? = nil, signals: [EDFSignal],
        annotations: [EDFAnnotation] = []
    ) {
        self.patient = patient
        self.start = start
        self.administrationCode = administrationCode
        self.technician = technician
        self.equipment = equipment
        self.signals = signals
        self.annotations = annotations
    }
}
