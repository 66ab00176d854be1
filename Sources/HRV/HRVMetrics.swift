/// The HRV figures over a run of NN intervals (Task Force 1996), in milliseconds where they have
/// a unit. A figure that cannot be computed from the beats at hand is nil.
public struct HRVMetrics: Sendable, Equatable {
    /// NN intervals in the window.
    public var beats: Int
    /// RR intervals changed or removed by artefact correction to make those beats.
    public var artefacts: Int
    /// The sum of the NN intervals, in seconds.
    public var seconds: Double
    /// Mean NN interval, in milliseconds; nil without a beat.
    public var meanNN: Double?
    /// Sample standard deviation (N - 1); nil below 2 beats.
    public var sdnn: Double?
    /// Root mean square of the usable successive differences; nil without one.
    public var rmssd: Double?
    /// Percentage of usable successive differences above 50 ms; nil without one.
    public var pnn50: Double?
    /// 60000 / meanNN.
    public var meanHR: Double?
    /// DFA short-term exponent (box sizes 4 to 16); nil below 50 beats or when not asked for.
    public var alpha1: Double?

    /// Figures as given; every one left out is 0 or nil.
    public init(
        beats: Int = 0, artefacts: Int = 0, seconds: Double = 0, meanNN: Double? = nil, sdnn: Double? = nil,
        rmssd: Double? = nil, pnn50: Double? = nil, meanHR: Double? = nil, alpha1: Double? = nil
    ) {
        self.beats = beats
        self.artefacts = artefacts
        self.seconds = seconds
        self.meanNN = meanNN
        self.sdnn = sdnn
        self.rmssd = rmssd
        self.pnn50 = pnn50
        self.meanHR = meanHR
        self.alpha1 = alpha1
    }
}
