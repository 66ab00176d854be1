public import ArgumentParser
import Monitor
import Outputs

/// `--osc HOST[:PORT]` and what goes with it: the heart rate as OSC messages (VRChat's avatar
/// parameters, or any OSC app with `--osc-prefix`).
public struct OSCArguments: ParsableArguments, Sendable {
    @Option(
        help: ArgumentHelp(
            "Send the heart rate as OSC messages to HOST:PORT (VRChat: 127.0.0.1:9000; default port 9000).",
            valueName: "host[:port]"))
    public var osc: String?

    @Option(
        help: ArgumentHelp(
            "The heart rates HRPercent maps to 0 and 1. (default: 0 and --max-hr, else 200)",
            valueName: "min:max"))
    public var oscRange: String?

    @Option(
        help: ArgumentHelp(
            "Put this before each parameter's name. (default: /avatar/parameters/)", valueName: "prefix"))
    public var oscPrefix: String?

    @Option(
        help: ArgumentHelp(
            "With several straps, the one OSC follows: an address or part of the name. (default: the first)",
            valueName: "device"))
    public var oscDevice: String?

    public init() {}

    public func validate() throws {
        if let osc {
            do throws(OSCDestination.Invalid) {
                _ = try OSCDestination(parsing: osc)
            } catch {
                throw ValidationError("--osc: \(error.description)")
            }
        }
        if let oscRange { _ = try Self.range(oscRange) }
        if let oscPrefix,
            !oscPrefix.hasPrefix("/") || oscPrefix.contains(where: { $0 == " " || $0 == "#" || $0.isNewline })
        {
            throw ValidationError(
                "--osc-prefix must start with / and hold no spaces or # (/avatar/parameters/)")
        }
        if osc == nil, oscRange != nil || oscPrefix != nil || oscDevice != nil {
            throw ValidationError("the --osc-… options need --osc HOST[:PORT]")
        }
        if oscDevice?.isEmpty == true { throw ValidationError("--osc-device must not be empty") }
    }

    /// `60:180`: two heart rates from 0 to 250, the first below the second.
    static func range(_ text: String) throws(ValidationError) -> ClosedRange<Int> {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let low = Int(parts[0]), let high = Int(parts[1]), (0...250).contains(low),
            (0...250).contains(high), low < high
        else {
            throw ValidationError(
                "--osc-range must be MIN:MAX, two heart rates from 0 to 250 bpm, the first below the second (60:180)"
            )
        }
        return low...high
    }

    /// The choices, or nil without `--osc`.
    var settings: OSCSettings? {
        guard let osc, let destination = try? OSCDestination(parsing: osc) else { return nil }
        var prefix = oscPrefix ?? OSCSettings.defaultPrefix
        if !prefix.hasSuffix("/") { prefix += "/" }
        return OSCSettings(
            destination: destination, prefix: prefix, range: oscRange.flatMap { try? Self.range($0) },
            device: oscDevice)
    }
}

extension OSCArguments: OutputOptionGroup {
    var output: (any OutputProvider)? { settings.map(OSCOutput.init) }

    /// The config file has no OSC keys yet: the destination belongs to one app's session.
    mutating func fill(from file: Configuration) {}
}
