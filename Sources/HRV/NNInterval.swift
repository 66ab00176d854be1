/// One beat after artefact correction: what every HRV metric is computed from.
public struct NNInterval: Sendable, Equatable {
    /// The interval in milliseconds.
    public var milliseconds: Double
    /// How many of the strap's RR intervals were changed or removed to make this one: 0 for a
    /// clean beat. See `ArtefactCorrector` for how each kind of artefact counts.
    public var artefacts: Int
    /// Whether the successive difference to the NN interval before it may be used (RMSSD, pNN50):
    /// false when either beat was corrected, or a gap (a dropped link) lies between them.
    public var differenceUsable: Bool

    /// An interval of `milliseconds`; by default a clean beat whose successive difference counts.
    public init(milliseconds: Double, artefacts: Int = 0, differenceUsable: Bool = true) {
        self.milliseconds = milliseconds
        self.artefacts = artefacts
        self.differenceUsable = differenceUsable
    }

    /// Whether the interval can be measured at all: finite and positive. Metrics and windows
    /// skip the others.
    var isMeasurable: Bool { milliseconds.isFinite && milliseconds > 0 }
}
