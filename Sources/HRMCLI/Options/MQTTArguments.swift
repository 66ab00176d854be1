public import ArgumentParser
import MQTT
import Monitor
import Outputs
import SessionLibrary

/// `--mqtt URL` and what goes with it: where watch publishes, under which names.
public struct MQTTArguments: ParsableArguments, Sendable {
    @Option(
        help: ArgumentHelp(
            "Publish to this MQTT broker: mqtt://[user:password@]host[:port] or mqtts://… (TLS).",
            valueName: "url"))
    public var mqtt: String?

    @Option(help: ArgumentHelp("This host's name in the topics. Default: the host name.", valueName: "id"))
    public var mqttID: String?

    // The default is in the help text (as ArgumentParser would show it): optional, so that the
    // config file's value is taken when the option is not given.
    @Option(help: ArgumentHelp("The first level of every topic. (default: hrm)", valueName: "prefix"))
    public var mqttPrefix: String?

    @Option(help: ArgumentHelp("Trust this CA file for mqtts:// (default: the system's).", valueName: "path"))
    public var mqttCafile: String?

    @Flag(help: "Do not publish Home Assistant discovery configs.")
    public var noHaDiscovery = false

    @Option(
        help: ArgumentHelp("Home Assistant's discovery prefix. (default: homeassistant)", valueName: "prefix")
    )
    public var haPrefix: String?

    public init() {}

    /// Whether an --mqtt-… or --ha-… option was given: they need a broker, from --mqtt or the
    /// config file (checked once the file is read: `WatchArguments.apply`).
    var detailsGiven: Bool {
        [mqttID, mqttCafile, mqttPrefix, haPrefix].contains { $0 != nil } || noHaDiscovery
    }

    public func validate() throws {
        if let mqtt {
            do throws(MQTTError) {
                _ = try MQTTBrokerURL(parsing: mqtt)
            } catch {
                throw ValidationError("--mqtt: \(error.message)")
            }
        }
        for (name, value) in [
            ("--mqtt-id", mqttID), ("--mqtt-prefix", mqttPrefix), ("--ha-prefix", haPrefix),
        ] {
            guard let value else { continue }
            if let problem = MQTTTopics.problem(withLevel: value) {
                throw ValidationError("\(name): \(problem)")
            }
        }
    }

    /// The choices as an output, or nil without `--mqtt`.
    var output: (any OutputProvider)? { settings.map(MQTTOutput.init) }

    /// The choices, or nil without `--mqtt`.
    var settings: MQTTSettings? {
        guard let mqtt, let url = try? MQTTBrokerURL(parsing: mqtt) else { return nil }
        return MQTTSettings(
            url: url, topics: MQTTTopics(prefix: mqttPrefix ?? "hrm", host: mqttID ?? Self.hostName),
            caFile: mqttCafile,
            discoveryPrefix: noHaDiscovery ? nil : haPrefix ?? "homeassistant")
    }

    /// The host name, made a valid topic level; `hrm` when there is none.
    static var hostName: String {
        HostName.current().flatMap(MQTTTopics.level) ?? "hrm"
    }
}

extension MQTTArguments: OutputOptionGroup {}
