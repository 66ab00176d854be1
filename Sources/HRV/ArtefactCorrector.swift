/// Finds and corrects missed, extra and ectopic beats in a stream of RR intervals, one beat at a
/// time, for live windows and whole files alike (one algorithm, so both agree).
///
/// It decides a beat once it has seen the few beats after it, so its output lags its input.
public struct ArtefactCorrector: Sendable {
    public let correcting: Bool
    /// RR intervals changed or removed so far.
    public private(set) var artefacts = 0
    private var held: [Double] = []
    private var runStarts = true

    public init(correcting: Bool = true) {
        self.correcting = correcting
    }

    /// Takes the next RR interval (milliseconds); returns the NN intervals it lets the corrector
    /// decide, oldest first (possibly none).
    public mutating func append(_ rrMilliseconds: Double) -> [NNInterval] {
        // SKELETON: passes every beat through.
        let beat = NNInterval(milliseconds: rrMilliseconds, differenceUsable: !runStarts)
        runStarts = false
        return [beat]
    }

    /// The beats held back, as they would be decided if the run ended now. Changes nothing.
    public var provisional: [NNInterval] { [] }

    /// The run ends here (the end of the input, or a gap such as a dropped link): decides the
    /// beats held back. The next beat starts a new run (no successive difference to it).
    public mutating func endRun() -> [NNInterval] {
        runStarts = true
        return []
    }
}
