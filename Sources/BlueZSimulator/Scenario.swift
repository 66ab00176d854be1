import FoundationEssentials

/// What hrm-sim plays: adapters, devices and what happens to them over time.
///
/// Scenarios are JSON files (`Scenarios/*.json`, documented in `Scenarios/README.md`). Times are
/// seconds since the simulator started serving. Every field but a device's address has a default,
/// so a scenario says only what matters to it.
public struct Scenario: Codable, Sendable, Equatable {
    public var description: String = ""
    /// bluetoothd's `[GATT] Cache`: `always` keeps GATT objects across a drop; `no` removes them
    /// and creates them again on reconnect.
    public var gattCache: GattCache = .always
    /// Real bluetoothd 5.66 sends `{UUIDs, ServicesResolved: true}` sometimes after the GATT
    /// objects' InterfacesAdded and sometimes before them (7 of 9 captures in the lab). Clients
    /// that list services the moment ServicesResolved arrives (bleak) need the first order;
    /// `before-objects` plays the second, to test clients that wait for their characteristics.
    public var servicesResolved: ServicesResolvedOrder = .afterObjects
    /// The private bus's policy: `deny-bluez` makes every call to org.bluez fail with AccessDenied,
    /// as for a user outside the `bluetooth` group.
    public var busPolicy: String = "open"
    /// When false, org.bluez is never served: bluetoothd is not running.
    public var bluetoothd: Bool = true
    public var adapters: [Adapter] = [Adapter()]
    public var devices: [Device] = []
    /// Centrals that connect to a peripheral a client registered (a GATT application and an
    /// advertisement, as `hrm relay` does), subscribe and log what they receive.
    public var consumers: [Consumer] = []
    public var events: [Event] = []

    public enum GattCache: String, Codable, Sendable {
        case always
        case no
    }

    public enum ServicesResolvedOrder: String, Codable, Sendable {
        case afterObjects = "after-objects"
        case beforeObjects = "before-objects"
    }

    public struct Adapter: Codable, Sendable, Equatable {
        public var name: String = "hci0"
        public var address: String = "00:AA:01:00:00:00"
        public var alias: String? = nil
        public var powered: Bool = true
        /// The most LE links the controller holds at once (real ones: 3 to 10); nil: no limit.
        /// A Connect() that would need one more fails as bluetoothd 5.66 fails it when the
        /// controller refuses the link: `org.bluez.Error.Failed`, `le-connection-abort-by-local`.
        public var maxConnections: Int? = nil
        /// What a Connect() meets while another device's Connect() is pending on this adapter:
        /// `allow` (both go ahead, as bluetoothd 5.66 on kernel 6.1 does) or `refuse` (it fails
        /// at once with `org.bluez.Error.InProgress`, "In Progress").
        public var concurrentConnects: String = "allow"
        /// Blocked through rfkill (what a desktop's "Bluetooth off" switch often does): powered
        /// off, `PowerState` `off-blocked`, and setting `Powered` fails with
        /// `org.bluez.Error.Blocked`, "Blocked through rfkill" (5.66 `src/adapter.c`,
        /// `property_set_mode_complete` on MGMT_STATUS_RFKILLED).
        public var blocked: Bool = false
        /// Whether the controller can be an LE peripheral: bluetoothd then offers GattManager1 and
        /// LEAdvertisingManager1 on the adapter (5.66 does for every LE controller).
        public var peripheral: Bool = true
        /// The advertising instances the controller has (`SupportedInstances`); one more
        /// RegisterAdvertisement fails with NotPermitted, "Maximum advertisements reached".
        public var maxAdvertisements: Int = 5

        public init() {}
    }

    /// A central (a phone, Zwift, a watch) that connects to a client's peripheral on `adapter`
    /// `connectAfter` seconds after the client's advertisement was registered there, reads what
    /// it can read (`read`), subscribes to what notifies (`subscribe`: the first central's
    /// subscription is StartNotify on the application's characteristic, as bluetoothd does),
    /// logs each value it receives (`consumer-value`), unsubscribes after `unsubscribeAfter`
    /// values of 0x2A37 (the last one's unsubscription is StopNotify) and disconnects
    /// `disconnectAfter` seconds later. `receives: false` subscribes and never takes a value.
    public struct Consumer: Codable, Sendable, Equatable {
        public var address: String
        /// The adapter it connects to; the first one when absent.
        public var adapter: String? = nil
        public var connectAfter: Double = 0.5
        public var read: Bool = true
        public var subscribe: Bool = true
        public var receives: Bool = true
        public var unsubscribeAfter: Int? = nil
        public var disconnectAfter: Double? = nil

        public init(address: String) {
            self.address = address
        }
    }

    public struct Device: Codable, Sendable, Equatable {
        public var address: String
        public var addressType: String = "random"
        /// The adapter that sees it; the first one when absent.
        public var adapter: String? = nil
        /// The advertised name; absent means none (Alias is then the address with dashes).
        public var name: String? = nil
        /// Signal strength in dBm while discovering; absent means the controller reports none.
        public var rssi: Int? = nil
        public var txPower: Int? = nil
        /// Advertised service UUIDs, short (`180d`) or long.
        public var uuids: [String] = ["180d"]
        /// Company identifier (decimal or `0x` hex) to payload (hex).
        public var manufacturerData: [String: String] = [:]
        public var appearance: Int? = nil
        /// When it starts advertising, and when it stops (null: never).
        public var appearAt: Double = 0
        public var vanishAt: Double? = nil
        /// Known to bluetoothd from an earlier session: in GetManagedObjects before any scan.
        public var known: Bool = false
        /// Body Sensor Location byte (0x2A38); null for a strap without the characteristic.
        public var location: Int? = 1
        /// Battery percent (0x180F and Battery1); null for none.
        public var battery: Int? = 90
        public var deviceInformation: DeviceInformation? = nil
        public var heartRate: HeartRateStream = HeartRateStream()
        /// The ATT MTU bluetoothd reports (and AcquireNotify returns).
        public var mtu: Int = 517
        /// Whether notifying characteristics offer AcquireNotify (`NotifyAcquired` present), as
        /// BlueZ 5.46 and later do; false plays an older bluetoothd, which has StartNotify only.
        public var acquireNotify: Bool = true
        /// Link drops: at `at`, for `for` seconds the strap cannot be reached.
        public var drops: [Drop] = []
        /// Errors the next Connect() calls fail with, one per call, in order.
        public var connectFailures: [DBusFailure] = []
        /// How long a Connect() takes once the strap is reachable, in seconds; nil: the
        /// simulator's usual 0.03 s. Meanwhile the Connect is pending (see `concurrentConnects`).
        public var connectDelay: Double? = nil
        /// GATT calls that fail or never answer: by member (`ReadValue`, `WriteValue`,
        /// `StartNotify`, `StopNotify`, `AcquireNotify`), the next calls of that member on any
        /// characteristic of the device, one failure per call, in order. A `stall` is a call never
        /// answered: the client's timeout ends it (the simulator forgets it when the client
        /// leaves the bus, bluetoothd restarts or the simulator stops).
        public var callFailures: [String: [DBusFailure]] = [:]
        /// What AcquireNotify hands out: `seqpacket` (what bluetoothd sends), or the wrong kind of
        /// descriptor for a client to cope with: `stream` (a SOCK_STREAM socket, frames run
        /// together), `pipe` (its read end), `file` (an unlinked temporary file), `devnull`.
        public var acquireFd: String = "seqpacket"
        /// The D-Bus type of `Value` in the PropertiesChanged that carry StartNotify's
        /// notifications: `ay` (what bluetoothd sends), or a wrong one: `s` (the frame as hex
        /// text) or `ai` (each byte an int32).
        public var valueType: String = "ay"
        /// A kind of device whose defaults it takes: `polar-h10` (a Polar H10: its name, device
        /// information, an ATT MTU of 232 and the PMD service, `pmd`), or nil for a plain strap.
        public var profile: String? = nil
        /// What Device1.Pair() meets: `just-works` (paired, as LE Just Works is, when an agent
        /// is there to be asked: the caller's or a default one), `refuse` (the strap fails the
        /// pairing: AuthenticationFailed), `reject` (AuthenticationRejected) or `timeout` (no
        /// answer: AuthenticationTimeout after the kernel's 30 s SMP timeout).
        public var pairing: String = "just-works"
        /// Paired (and bonded) from an earlier session: Paired and Bonded true from the start, and
        /// in GetManagedObjects before any scan, as bluetoothd keeps paired devices.
        public var paired: Bool = false
        /// Whether pairing bonds (the keys are stored: `Bonded` true), as an H10 does; false plays
        /// the lab's btvirt controllers (Paired true, Bonded false).
        public var bonds: Bool = true
        /// Polar's PMD service (ECG and acceleration), as an H10 offers it; nil for none.
        public var pmd: PMD? = nil

        public init(address: String) {
            self.address = address
        }

        /// A Polar H10 at `address`, with the `polar-h10` profile's defaults.
        public static func polarH10(address: String) -> Device {
            var device = Device(address: address)
            device.profile = Profile.polarH10.rawValue
            device.applyProfile(hasName: false, hasInformation: false, hasMTU: false, hasPMD: false)
            return device
        }

        /// Fills what the profile gives and the scenario left out.
        mutating func applyProfile(hasName: Bool, hasInformation: Bool, hasMTU: Bool, hasPMD: Bool) {
            guard profile == Profile.polarH10.rawValue else { return }
            // An H10's name and serial are its device ID, the address's last four bytes.
            let id =
                SimulatedAddress(address).map { address in
                    address.octets.suffix(4).map {
                        ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true)
                    }
                    .joined()
                }
                ?? "00000000"
            if !hasName { name = "Polar H10 \(id)" }
            if !hasInformation {
                deviceInformation = DeviceInformation(
                    manufacturer: "Polar Electro Oy", model: "H10", serial: id, firmware: "3.3.2")
            }
            if !hasMTU { mtu = 232 }
            if !hasPMD { pmd = PMD() }
        }
    }

    /// The kinds of device `profile` names.
    public enum Profile: String, Sendable, CaseIterable {
        /// A Polar H10: heart rate, battery, device information and the PMD service.
        case polarH10 = "polar-h10"
    }

    /// What `pairing` names.
    public enum Pairing: String, Sendable, CaseIterable {
        /// LE Just Works: paired when an agent is registered (the agent is not asked).
        case justWorks = "just-works"
        /// The strap fails the pairing: AuthenticationFailed, "Authentication Failed".
        case refuse
        /// The strap rejects it: AuthenticationRejected, "Authentication Rejected".
        case reject
        /// The strap never answers: AuthenticationTimeout, "Authentication Timeout".
        case timeout
    }

    /// Polar's PMD service on a device: the control point and the data characteristic, ECG
    /// synthesised from the strap's own beats and acceleration, as an H10 streams them.
    public struct PMD: Codable, Sendable, Equatable {
        /// The sensor's clock when the simulator starts, in nanoseconds since 2000-01-01; nil: an
        /// H10 after a battery change, 2019-01-01.
        public var clockStart: UInt64? = nil
        /// Acceleration frames delta-compressed (frame type 0x81) instead of raw (type 1).
        public var accCompressed: Bool = false
        /// The R wave's height in microvolts.
        public var ecgAmplitude: Double = 1200
        /// The ECG's noise (standard deviation, microvolts).
        public var ecgNoise: Double = 8
        /// Seeds the ECG's noise and the acceleration's.
        public var seed: UInt64 = 1

        public init() {}
    }

    public struct DeviceInformation: Codable, Sendable, Equatable {
        public var manufacturer: String? = nil
        public var model: String? = nil
        public var serial: String? = nil
        public var firmware: String? = nil
    }

    public struct HeartRateStream: Codable, Sendable, Equatable {
        /// `realistic` (beats around `bpm`), `series` (`values` in turn), `frames` (`frames`, raw hex)
        /// or `replay` (`frames` once each, at `times`).
        public var mode: Mode = .realistic
        public var bpm: Double = 72
        public var variability: Double = 4
        /// Realistic: the base heart rate climbs from `bpm` to this over `climbSeconds`, then stays.
        public var climbTo: Double? = nil
        public var climbSeconds: Double = 60
        public var values: [Int] = []
        public var frames: [String] = []
        /// Replay: when each of `frames` is sent, in seconds after the first (so the first is 0).
        public var times: [Double] = []
        /// Seconds between notifications (replay: before the first frame).
        public var interval: Double = 1
        public var format: String = "uint8"
        public var rr: Bool = true
        /// Energy expended at the start in kJ; null for frames without it.
        public var energyStart: Int? = nil
        public var energyPerMinute: Double = 40
        public var contact: String = "detected"
        public var contactChanges: [ContactChange] = []
        public var seed: UInt64 = 1

        public enum Mode: String, Codable, Sendable {
            case realistic, series, frames, replay
        }

        public init() {}
    }

    public struct ContactChange: Codable, Sendable, Equatable {
        public var at: Double
        public var contact: String
    }

    /// A link drop: for `for` seconds the strap cannot be reached. It starts at `at` seconds
    /// into the run, or right after the strap's `afterNotifications`-th notification (counted
    /// over the run, by either method): one of the two. A drop tied to the stream comes at the
    /// same point of it however long the client took to connect. With `every`, it comes again
    /// and again, that many seconds after the start of the one before, for the rest of the run.
    public struct Drop: Codable, Sendable, Equatable {
        public var at: Double?
        public var afterNotifications: Int?
        /// With `afterNotifications`: the drop comes this many seconds after that notification.
        public var delay: Double?
        public var `for`: Double
        /// Seconds from the start of one drop to the start of the next (above `for`); nil: once.
        public var every: Double? = nil

        public init(at: Double, for duration: Double) {
            self.at = at
            self.for = duration
        }

        public init(afterNotifications: Int, for duration: Double) {
            self.afterNotifications = afterNotifications
            self.for = duration
        }
    }

    /// How one call fails: with a D-Bus error (`error`, `message`), or by a `stall`. For Connect()
    /// a stall answers at once but the link never comes up, and every later Connect does the
    /// same until a Disconnect. That is bluetoothd once it has lost track of a link (its log
    /// says `device_add_connection() ... is already connected`), seen in the real BlueZ lab. For
    /// a GATT call (`callFailures`) a stall is a call that is never answered.
    public struct DBusFailure: Codable, Sendable, Equatable {
        public var error: String = ""
        public var message: String = ""
        public var stall: Bool = false

        public init(error: String = "", message: String = "", stall: Bool = false) {
            self.error = error
            self.message = message
            self.stall = stall
        }
    }

    /// The GATT calls `callFailures` can make fail.
    public enum GATTCall: String, Sendable, CaseIterable {
        case readValue = "ReadValue"
        case writeValue = "WriteValue"
        case startNotify = "StartNotify"
        case stopNotify = "StopNotify"
        case acquireNotify = "AcquireNotify"
    }

    /// What `acquireFd` names.
    public enum AcquiredDescriptor: String, Sendable, CaseIterable {
        case seqpacket, stream, pipe, file, devnull
    }

    /// What an adapter's `concurrentConnects` names.
    public enum ConcurrentConnects: String, Sendable, CaseIterable {
        case allow, refuse
    }

    /// What `valueType` names: the D-Bus signature of a notification's `Value`.
    public enum NotificationValueType: String, Sendable, CaseIterable {
        case bytes = "ay"
        case string = "s"
        case int32s = "ai"
    }

    public init() {}
}

// Lenient decoding: every field may be left out and takes its default.
extension Scenario {
    private enum CodingKeys: String, CodingKey {
        case description, gattCache, servicesResolved, busPolicy, bluetoothd, adapters, devices, events
        case consumers
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        description = try c.decodeIfPresent(String.self, forKey: .description) ?? ""
        gattCache = try c.decodeIfPresent(GattCache.self, forKey: .gattCache) ?? .always
        servicesResolved =
            try c.decodeIfPresent(ServicesResolvedOrder.self, forKey: .servicesResolved) ?? .afterObjects
        busPolicy = try c.decodeIfPresent(String.self, forKey: .busPolicy) ?? "open"
        bluetoothd = try c.decodeIfPresent(Bool.self, forKey: .bluetoothd) ?? true
        adapters = try c.decodeIfPresent([Adapter].self, forKey: .adapters) ?? [Adapter()]
        devices = try c.decodeIfPresent([Device].self, forKey: .devices) ?? []
        events = try c.decodeIfPresent([Event].self, forKey: .events) ?? []
        consumers = try c.decodeIfPresent([Consumer].self, forKey: .consumers) ?? []
    }
}

extension Scenario.Adapter {
    private enum CodingKeys: String, CodingKey {
        case name, address, alias, powered, maxConnections, concurrentConnects, blocked, peripheral
        case maxAdvertisements
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodeIfPresent(String.self, forKey: .name) ?? "hci0"
        address = try c.decodeIfPresent(String.self, forKey: .address) ?? "00:AA:01:00:00:00"
        alias = try c.decodeIfPresent(String.self, forKey: .alias)
        powered = try c.decodeIfPresent(Bool.self, forKey: .powered) ?? true
        maxConnections = try c.decodeIfPresent(Int.self, forKey: .maxConnections)
        concurrentConnects = try c.decodeIfPresent(String.self, forKey: .concurrentConnects) ?? "allow"
        blocked = try c.decodeIfPresent(Bool.self, forKey: .blocked) ?? false
        if blocked { powered = false }
        peripheral = try c.decodeIfPresent(Bool.self, forKey: .peripheral) ?? true
        maxAdvertisements = try c.decodeIfPresent(Int.self, forKey: .maxAdvertisements) ?? 5
    }
}

extension Scenario.Device {
    private enum CodingKeys: String, CodingKey {
        case address, addressType, adapter, name, rssi, txPower, uuids, manufacturerData, appearance
        case appearAt, vanishAt, known, location, battery, deviceInformation, heartRate, mtu, drops
        case connectFailures, connectDelay, acquireNotify, callFailures, acquireFd, valueType
        case profile, pairing, paired, bonds, pmd
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var d = Scenario.Device(address: try c.decode(String.self, forKey: .address))
        d.addressType = try c.decodeIfPresent(String.self, forKey: .addressType) ?? d.addressType
        d.adapter = try c.decodeIfPresent(String.self, forKey: .adapter)
        d.name = try c.decodeIfPresent(String.self, forKey: .name)
        d.rssi = try c.decodeIfPresent(Int.self, forKey: .rssi)
        d.txPower = try c.decodeIfPresent(Int.self, forKey: .txPower)
        d.uuids = try c.decodeIfPresent([String].self, forKey: .uuids) ?? d.uuids
        d.manufacturerData = try c.decodeIfPresent([String: String].self, forKey: .manufacturerData) ?? [:]
        d.appearance = try c.decodeIfPresent(Int.self, forKey: .appearance)
        d.appearAt = try c.decodeIfPresent(Double.self, forKey: .appearAt) ?? 0
        d.vanishAt = try c.decodeIfPresent(Double.self, forKey: .vanishAt)
        d.known = try c.decodeIfPresent(Bool.self, forKey: .known) ?? false
        // `"location": null` means no 0x2A38; a missing key means the default (chest).
        d.location = c.contains(.location) ? try c.decodeIfPresent(Int.self, forKey: .location) : d.location
        d.battery = c.contains(.battery) ? try c.decodeIfPresent(Int.self, forKey: .battery) : d.battery
        d.deviceInformation = try c.decodeIfPresent(
            Scenario.DeviceInformation.self, forKey: .deviceInformation)
        d.heartRate = try c.decodeIfPresent(Scenario.HeartRateStream.self, forKey: .heartRate) ?? d.heartRate
        d.mtu = try c.decodeIfPresent(Int.self, forKey: .mtu) ?? d.mtu
        d.acquireNotify = try c.decodeIfPresent(Bool.self, forKey: .acquireNotify) ?? d.acquireNotify
        d.drops = try c.decodeIfPresent([Scenario.Drop].self, forKey: .drops) ?? []
        d.connectFailures = try c.decodeIfPresent([Scenario.DBusFailure].self, forKey: .connectFailures) ?? []
        d.connectDelay = try c.decodeIfPresent(Double.self, forKey: .connectDelay)
        d.callFailures =
            try c.decodeIfPresent([String: [Scenario.DBusFailure]].self, forKey: .callFailures) ?? [:]
        d.acquireFd = try c.decodeIfPresent(String.self, forKey: .acquireFd) ?? d.acquireFd
        d.valueType = try c.decodeIfPresent(String.self, forKey: .valueType) ?? d.valueType
        d.profile = try c.decodeIfPresent(String.self, forKey: .profile)
        d.pairing = try c.decodeIfPresent(String.self, forKey: .pairing) ?? d.pairing
        d.paired = try c.decodeIfPresent(Bool.self, forKey: .paired) ?? d.paired
        d.bonds = try c.decodeIfPresent(Bool.self, forKey: .bonds) ?? d.bonds
        d.pmd = try c.decodeIfPresent(Scenario.PMD.self, forKey: .pmd)
        d.applyProfile(
            hasName: c.contains(.name), hasInformation: c.contains(.deviceInformation),
            hasMTU: c.contains(.mtu),
            hasPMD: c.contains(.pmd))
        self = d
    }
}

extension Scenario.HeartRateStream {
    private enum CodingKeys: String, CodingKey {
        case mode, bpm, variability, climbTo, climbSeconds, values, frames, times, interval, format, rr
        case energyStart
        case energyPerMinute, contact, contactChanges, seed
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var s = Scenario.HeartRateStream()
        s.mode = try c.decodeIfPresent(Mode.self, forKey: .mode) ?? s.mode
        s.bpm = try c.decodeIfPresent(Double.self, forKey: .bpm) ?? s.bpm
        s.variability = try c.decodeIfPresent(Double.self, forKey: .variability) ?? s.variability
        s.climbTo = try c.decodeIfPresent(Double.self, forKey: .climbTo)
        s.climbSeconds = try c.decodeIfPresent(Double.self, forKey: .climbSeconds) ?? s.climbSeconds
        s.values = try c.decodeIfPresent([Int].self, forKey: .values) ?? []
        s.frames = try c.decodeIfPresent([String].self, forKey: .frames) ?? []
        s.times = try c.decodeIfPresent([Double].self, forKey: .times) ?? []
        s.interval = try c.decodeIfPresent(Double.self, forKey: .interval) ?? s.interval
        s.format = try c.decodeIfPresent(String.self, forKey: .format) ?? s.format
        s.rr = try c.decodeIfPresent(Bool.self, forKey: .rr) ?? s.rr
        s.energyStart = try c.decodeIfPresent(Int.self, forKey: .energyStart)
        s.energyPerMinute = try c.decodeIfPresent(Double.self, forKey: .energyPerMinute) ?? s.energyPerMinute
        s.contact = try c.decodeIfPresent(String.self, forKey: .contact) ?? s.contact
        s.contactChanges = try c.decodeIfPresent([Scenario.ContactChange].self, forKey: .contactChanges) ?? []
        s.seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? s.seed
        self = s
    }
}

extension Scenario.PMD {
    private enum CodingKeys: String, CodingKey {
        case clockStart, accCompressed, ecgAmplitude, ecgNoise, seed
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var pmd = Scenario.PMD()
        pmd.clockStart = try c.decodeIfPresent(UInt64.self, forKey: .clockStart)
        pmd.accCompressed = try c.decodeIfPresent(Bool.self, forKey: .accCompressed) ?? pmd.accCompressed
        pmd.ecgAmplitude = try c.decodeIfPresent(Double.self, forKey: .ecgAmplitude) ?? pmd.ecgAmplitude
        pmd.ecgNoise = try c.decodeIfPresent(Double.self, forKey: .ecgNoise) ?? pmd.ecgNoise
        pmd.seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? pmd.seed
        self = pmd
    }
}

extension Scenario.DBusFailure {
    private enum CodingKeys: String, CodingKey { case error, message, stall }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        stall = try c.decodeIfPresent(Bool.self, forKey: .stall) ?? false
        error = try c.decodeIfPresent(String.self, forKey: .error) ?? ""
        message = try c.decodeIfPresent(String.self, forKey: .message) ?? ""
    }
}

extension Scenario.Consumer {
    private enum CodingKeys: String, CodingKey {
        case address, adapter, connectAfter, read, subscribe, receives, unsubscribeAfter, disconnectAfter
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var consumer = Scenario.Consumer(address: try c.decode(String.self, forKey: .address))
        consumer.adapter = try c.decodeIfPresent(String.self, forKey: .adapter)
        consumer.connectAfter =
            try c.decodeIfPresent(Double.self, forKey: .connectAfter) ?? consumer.connectAfter
        consumer.read = try c.decodeIfPresent(Bool.self, forKey: .read) ?? true
        consumer.subscribe = try c.decodeIfPresent(Bool.self, forKey: .subscribe) ?? true
        consumer.receives = try c.decodeIfPresent(Bool.self, forKey: .receives) ?? true
        consumer.unsubscribeAfter = try c.decodeIfPresent(Int.self, forKey: .unsubscribeAfter)
        consumer.disconnectAfter = try c.decodeIfPresent(Double.self, forKey: .disconnectAfter)
        self = consumer
    }
}
