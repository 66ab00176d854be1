import MQTT
import Monitor
import Outputs
import SessionLibrary

/// The defaults a user keeps in the config file (`$XDG_CONFIG_HOME/hrm/config.toml`), checked:
/// every value here is one its option would take. Nil: the file does not say. The command line
/// overrides all of it (see ConfigMerge.swift).
///
/// The keys are the long options' names without the dashes; those of `[hrv]`, `[mqtt]` and
/// `[serve]` drop the table's name (`--mqtt-id` is `id` in `[mqtt]`). The README's "Config file"
/// section shows them all.
public struct Configuration: Sendable, Equatable {
    /// The file read; nil when there was none (or `--no-config`).
    public var path: String?

    /// `device = "polar"` or `devices = ["polar", "hci1/wahoo"]`: DEVICE arguments for `watch`,
    /// `record` and `serve` when none (and no `--all`) are given.
    var devices: [String]?
    var adapter: String?
    var powerOn: Bool?
    var scanTimeout: Seconds?
    var format: OutputFormat?
    var color: ColorChoice?

    // Zones: `max-hr` (with `rest-hr`) or `zones`, as on the command line.
    var maxHR: Int?
    var restHR: Int?
    var zones: [Int]?

    var hrv = HRV()
    var mqtt = MQTT()
    var serve = Serve()

    struct HRV: Sendable, Equatable {
        /// Seconds between hrv events; 0: none.
        var every: Double?
        var window: Seconds?
    }

    struct MQTT: Sendable, Equatable {
        var url: String?
        var id: String?
        var prefix: String?
        var cafile: String?
        /// False: `--no-ha-discovery`.
        var haDiscovery: Bool?
        var haPrefix: String?
    }

    struct Serve: Sendable, Equatable {
        var listen: String?
        /// `allow-host = "studio.lan"` or `["studio.lan", "192.168.1.20"]`: `--allow-host`.
        var allowHost: [String]?
    }

    public init() {}

    /// The settings in `entries` (a parsed file), and a warning for each key hrm does not know.
    static func read(_ entries: [ConfigEntry], path: String) throws(ConfigError)
        -> (Configuration, [ConfigWarning])
    {
        var file = Configuration()
        file.path = path
        var top = ConfigReader(entries, path: path)
        try file.readDevices(&top)
        file.adapter = try top.string("adapter", "an adapter's name (\"hci0\") or address")
        file.powerOn = try top.boolean("power-on")
        file.scanTimeout = try top.seconds("scan-timeout", atMost: 3600).flatMap { try? Seconds($0) }
        file.format = try top.choice("format", OutputFormat.self)
        file.color = try top.choice("color", ColorChoice.self)
        try file.readZones(&top)
        var warnings: [ConfigWarning] = []
        warnings += try top.table("hrv") { (hrv: inout ConfigReader) throws(ConfigError) in
            file.hrv.every = try hrv.seconds("every", atMost: Seconds.ceiling, zeroAllowed: true)
            file.hrv.window = try hrv.seconds("window", atLeast: 10, atMost: 3600).flatMap {
                try? Seconds($0)
            }
        }
        warnings += try top.table("mqtt") { (mqtt: inout ConfigReader) throws(ConfigError) in
            try file.readMQTT(&mqtt)
        }
        warnings += try top.table("serve") { (serve: inout ConfigReader) throws(ConfigError) in
            let rule = "HOST:PORT, [IPv6]:PORT or :PORT with a port from 0 to 65535"
            if let listen = try serve.string("listen", rule) {
                guard ListenAddress(listen) != nil else {
                    throw serve.unexpected("listen", rule, .string(listen), code: .badValue)
                }
                file.serve.listen = listen
            }
            file.serve.allowHost = try Self.readHostNames(&serve)
        }
        warnings += top.unknownKeys()
        return (file, warnings.sorted { ($0.line ?? 0) < ($1.line ?? 0) })
    }

    /// `[serve] allow-host`: one name, or an array of them.
    private static func readHostNames(_ serve: inout ConfigReader) throws(ConfigError) -> [String]? {
        guard let found = serve.value("allow-host") else { return nil }
        let rule = "a host name or address, or an array of them ([\"studio.lan\", \"192.168.1.20\"])"
        let names: [String]
        switch found {
        case .string(let one):
            names = [one]
        case .array(let values):
            names = values.compactMap { if case .string(let text) = $0 { text } else { nil } }
            guard names.count == values.count, !names.isEmpty else {
                throw serve.unexpected("allow-host", rule, found, code: .wrongType)
            }
        default:
            throw serve.unexpected("allow-host", rule, found, code: .wrongType)
        }
        guard names.allSatisfy(ListenAddress.isHostName) else {
            throw serve.unexpected("allow-host", rule, found, code: .badValue)
        }
        return names
    }

    private mutating func readDevices(_ top: inout ConfigReader) throws(ConfigError) {
        let expected = "a device's address or part of its name (\"polar\", \"hci1/C0:FF:EE:00:00:01\")"
        let one = try top.string("device", expected)
        guard let list = top.value("devices") else {
            devices = one.map { [$0] }
            return
        }
        let listExpected = "an array of devices ([\"polar\", \"hci1/wahoo\"])"
        if one != nil {
            throw top.error(.conflict, "devices", "give device or devices, not both")
        }
        guard case .array(let values) = list, !values.isEmpty else {
            throw top.unexpected("devices", listExpected, list, code: .wrongType)
        }
        var requests: [StrapRequest] = []
        for value in values {
            guard case .string(let text) = value else {
                throw top.unexpected("devices", listExpected, list, code: .wrongType)
            }
            let request = StrapRequest(parsing: text)
            if request.wanted.isEmpty {
                throw top.error(.badValue, "devices", "an empty device would match any strap")
            }
            if requests.contains(request) {
                throw top.error(.badValue, "devices", "\(request.spoken) is given twice")
            }
            requests.append(request)
        }
        devices = values.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }

    private mutating func readZones(_ top: inout ConfigReader) throws(ConfigError) {
        let heartRate = "a heart rate from 25 to 250 bpm"
        maxHR = try top.integer("max-hr", in: 25...250, heartRate)
        restHR = try top.integer("rest-hr", in: 25...250, heartRate)
        let rule = "1 to 10 increasing heart rates from 25 to 250 bpm ([100, 120, 140, 160, 180])"
        if let found = top.value("zones") {
            switch found {
            case .array(let values):
                let numbers = values.compactMap { if case .integer(let number) = $0 { number } else { nil } }
                guard numbers.count == values.count else {
                    throw top.unexpected("zones", rule, found, code: .wrongType)
                }
                guard let bounds = try? ZoneOptions.bounds(numbers.map(String.init).joined(separator: ","))
                else {
                    throw top.unexpected("zones", rule, found, code: .badValue)
                }
                zones = bounds
            case .string(let text):
                guard let bounds = try? ZoneOptions.bounds(text) else {
                    throw top.unexpected("zones", rule, found, code: .badValue)
                }
                zones = bounds
            default:
                throw top.unexpected("zones", rule, found, code: .wrongType)
            }
        }
        if maxHR != nil, zones != nil {
            throw top.error(.conflict, "zones", "give max-hr or zones, not both")
        }
        if let restHR {
            guard let maxHR else { throw top.error(.conflict, "rest-hr", "rest-hr needs max-hr") }
            if restHR >= maxHR { throw top.error(.badValue, "rest-hr", "must be below max-hr (\(maxHR))") }
        }
    }

    private mutating func readMQTT(_ reader: inout ConfigReader) throws(ConfigError) {
        if let url = try reader.string("url", "mqtt://[user:password@]host[:port] or mqtts://…") {
            do throws(MQTTError) {
                _ = try MQTTBrokerURL(parsing: url)
            } catch {
                throw reader.error(.badValue, "url", error.message)
            }
            mqtt.url = url
        }
        for (key, keyPath) in [("id", \MQTT.id), ("prefix", \MQTT.prefix), ("ha-prefix", \MQTT.haPrefix)] {
            guard let level = try reader.string(key, "a topic level") else { continue }
            if let problem = MQTTTopics.problem(withLevel: level) {
                throw reader.error(.badValue, key, problem)
            }
            mqtt[keyPath: keyPath] = level
        }
        mqtt.cafile = try reader.string("cafile", "the path of a CA file")
        mqtt.haDiscovery = try reader.boolean("ha-discovery")
    }
}
