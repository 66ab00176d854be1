public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// `--max-hr`, `--rest-hr` and `--zones`: heart-rate zones for measurements, the live line and the
/// summary.
public struct ZoneOptions: ParsableArguments, Sendable {
    @Option(
        help: ArgumentHelp("Maximum heart rate: zones 1-5 from 50/60/70/80/90 % of it.", valueName: "bpm"))
    public var maxHr: Int?

    @Option(
        help: ArgumentHelp(
            "Resting heart rate: with --max-hr, zones of the heart-rate reserve (Karvonen).", valueName: "bpm"
        ))
    public var restHr: Int?

    @Option(
        help: ArgumentHelp(
            "Zones by their lower bounds in bpm, increasing (100,120,140,160,180).", valueName: "bpm,bpm,..."),
        transform: ZoneOptions.bounds)
    public var zones: [Int]?

    public init() {}

    public func validate() throws {
        let plausible = 25...250
        for (name, value) in [("--max-hr", maxHr), ("--rest-hr", restHr)] {
            if let value, !plausible.contains(value) {
                throw ValidationError("\(name) must be a heart rate from 25 to 250 bpm")
            }
        }
        if maxHr != nil, zones != nil { throw ValidationError("give --max-hr or --zones, not both") }
        if let restHr {
            guard let maxHr else { throw ValidationError("--rest-hr needs --max-hr") }
            if restHr >= maxHr { throw ValidationError("--rest-hr must be below --max-hr") }
        }
    }

    /// `100,120,140,160,180`: 1 to 10 increasing heart rates from 25 to 250.
    static func bounds(_ text: String) throws(ValidationError) -> [Int] {
        let rule =
            "give 1 to 10 increasing heart rates from 25 to 250 bpm, separated by commas (100,120,140,160,180)"
        let fields = text.split(separator: ",", omittingEmptySubsequences: false)
        var bounds: [Int] = []
        for field in fields {
            let words = field.split(separator: " ")
            guard words.count == 1, let value = Int(words[0]), (25...250).contains(value),
                value > (bounds.last ?? 0)
            else {
                throw ValidationError(rule)
            }
            bounds.append(value)
        }
        guard (1...10).contains(bounds.count) else { throw ValidationError(rule) }
        return bounds
    }

    /// The zones asked for; nil when none.
    var chosen: HeartRateZones? {
        if let zones { return HeartRateZones(lowerBounds: zones) }
        return maxHr.map { HeartRateZones(maximum: $0, rest: restHr) }
    }
}
