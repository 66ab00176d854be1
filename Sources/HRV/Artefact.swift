/// One RR interval the corrector changed or removed, for users who want to see what was done to
/// their data (`hrm hrv --explain`).
public struct Artefact: Sendable, Equatable {
    /// The RR interval's place among every RR the corrector was given (0 for the first), counting
    /// across runs and counting unmeasurable RRs too.
    public var index: Int
    /// The place of the NN interval it went into, or of the one after it when it was removed,
    /// among every NN interval the corrector handed out (0 for the first).
    public var beat: Int
    /// What the corrector took it for.
    public var kind: ArtefactKind

    /// An artefact at RR `index`, in NN interval `beat`, of `kind`.
    public init(index: Int, beat: Int, kind: ArtefactKind) {
        self.index = index
        self.beat = beat
        self.kind = kind
    }
}

/// What a changed RR interval was taken for, and so how it was corrected.
public enum ArtefactKind: String, Sendable, Equatable, CaseIterable {
    /// A long RR spanning two beats (a missed detection): split into two equal NN intervals.
    case missed
    /// One of two short RRs that make one beat (an extra detection): merged with the other.
    case extra
    /// One of a premature beat and its compensatory pause: both became their mean.
    case ectopic
    /// A long RR that is no missed beat: replaced by the mean of its neighbours.
    case long
    /// A short RR that is no extra beat: replaced by the mean of its neighbours.
    case short
    /// Not finite, or not positive: removed.
    case removed
}
