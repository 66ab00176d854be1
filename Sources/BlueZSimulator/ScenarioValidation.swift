import DBus
import HeartRate

/// What is wrong with a scenario, each problem with the JSON path of the field.
public struct ScenarioError: Error, Sendable, CustomStringConvertible {
    public let problems: [String]

    public var description: String {
        "invalid scenario:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}

extension Scenario {
    /// Checks everything the simulator will rely on, and reports every problem at once.
    public func validate() throws(ScenarioError) {
        var problems: [String] = []
        func check(_ condition: Bool, _ problem: @autoclosure () -> String) {
            if !condition { problems.append(problem()) }
        }

        check(
            PrivateBus.Policy(rawValue: busPolicy) != nil, "busPolicy: 'open', 'deny-bluez' or 'deny-notify'")
        check(!adapters.isEmpty || devices.isEmpty, "devices: there are devices but no adapter to see them")
        var adapterNames = Set<String>()
        for (i, adapter) in adapters.enumerated() {
            let path = "adapters[\(i)]"
            check(Self.isAdapterName(adapter.name), "\(path).name: '\(adapter.name)' is not like hci0")
            check(adapterNames.insert(adapter.name).inserted, "\(path).name: '\(adapter.name)' appears twice")
            check(
                SimulatedAddress(adapter.address) != nil,
                "\(path).address: '\(adapter.address)' is not AA:BB:CC:DD:EE:FF")
            if let cap = adapter.maxConnections {
                check(cap >= 1, "\(path).maxConnections: needs to be 1 or more (leave it out for no limit)")
            }
            check(
                ConcurrentConnects(rawValue: adapter.concurrentConnects) != nil,
                "\(path).concurrentConnects: '\(adapter.concurrentConnects)' is not "
                    + ConcurrentConnects.allCases.map(\.rawValue).joined(separator: ", "))
        }

        check(
            adapters.allSatisfy { (0...255).contains($0.maxAdvertisements) },
            "adapters: maxAdvertisements needs to be from 0 to 255")
        for (i, consumer) in consumers.enumerated() {
            let path = "consumers[\(i)]"
            check(
                SimulatedAddress(consumer.address) != nil,
                "\(path).address: '\(consumer.address)' is not AA:BB:CC:DD:EE:FF")
            if let adapter = consumer.adapter {
                check(adapterNames.contains(adapter), "\(path).adapter: no adapter '\(adapter)'")
            }
            check(consumer.connectAfter >= 0, "\(path).connectAfter: needs to be 0 or more")
            check((consumer.unsubscribeAfter ?? 1) >= 1, "\(path).unsubscribeAfter: needs to be 1 or more")
            check((consumer.disconnectAfter ?? 0) >= 0, "\(path).disconnectAfter: needs to be 0 or more")
        }

        var addresses = Set<String>()
        for (i, device) in devices.enumerated() {
            let path = "devices[\(i)]"
            let address = SimulatedAddress(device.address)
            check(address != nil, "\(path).address: '\(device.address)' is not AA:BB:CC:DD:EE:FF")
            if let address {
                check(
                    addresses.insert(address.description + (device.adapter ?? "")).inserted,
                    "\(path).address: \(address) appears twice on one adapter")
            }
            check(
                ["public", "random"].contains(device.addressType), "\(path).addressType: 'public' or 'random'"
            )
            if let adapter = device.adapter {
                check(adapterNames.contains(adapter), "\(path).adapter: no adapter named '\(adapter)'")
            }
            for (j, uuid) in device.uuids.enumerated() {
                check(SimulatedUUID(uuid) != nil, "\(path).uuids[\(j)]: '\(uuid)' is not a UUID")
            }
            for (company, payload) in device.manufacturerData {
                check(
                    Self.companyID(company) != nil,
                    "\(path).manufacturerData: '\(company)' is not a company id (0-65535)")
                check(
                    Self.bytes(hex: payload) != nil,
                    "\(path).manufacturerData[\(company)]: '\(payload)' is not hex")
            }
            if let rssi = device.rssi {
                check((-127...127).contains(rssi), "\(path).rssi: \(rssi) is not a dBm value")
            }
            if let location = device.location {
                check((0...255).contains(location), "\(path).location: 0-255")
            }
            if let battery = device.battery {
                check((0...255).contains(battery), "\(path).battery: 0-255 (above 100 is a broken sensor)")
            }
            check((23...517).contains(device.mtu), "\(path).mtu: \(device.mtu) is outside 23-517")
            if let vanish = device.vanishAt {
                check(vanish > device.appearAt, "\(path).vanishAt: before appearAt")
            }
            for (j, drop) in device.drops.enumerated() {
                check(drop.for > 0, "\(path).drops[\(j)].for: needs to be above 0")
                switch (drop.at, drop.afterNotifications) {
                case (let at?, nil): check(at >= 0, "\(path).drops[\(j)].at: needs to be 0 or more")
                case (nil, let count?):
                    check(count >= 1, "\(path).drops[\(j)].afterNotifications: needs to be 1 or more")
                default: check(false, "\(path).drops[\(j)]: needs one of at and afterNotifications")
                }
                if let every = drop.every {
                    check(
                        every > drop.for && every <= Self.longestWait,
                        "\(path).drops[\(j)].every: above 'for' and at most \(Int(Self.longestWait)) seconds")
                }
                if let delay = drop.delay {
                    check(
                        drop.afterNotifications != nil,
                        "\(path).drops[\(j)].delay: only with afterNotifications")
                    check(
                        delay >= 0 && delay <= Self.longestWait,
                        "\(path).drops[\(j)].delay: 0 to \(Int(Self.longestWait)) seconds")
                }
            }
            problems += Self.problems(device.connectFailures, at: "\(path).connectFailures")
            if let delay = device.connectDelay {
                check(
                    delay >= 0 && delay <= Self.longestWait,
                    "\(path).connectDelay: 0 to \(Int(Self.longestWait)) seconds")
            }
            for (member, failures) in device.callFailures.sorted(by: { $0.key < $1.key }) {
                check(
                    GATTCall(rawValue: member) != nil,
                    "\(path).callFailures.\(member): not a GATT call ("
                        + GATTCall.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                problems += Self.problems(failures, at: "\(path).callFailures.\(member)")
            }
            check(
                AcquiredDescriptor(rawValue: device.acquireFd) != nil,
                "\(path).acquireFd: '\(device.acquireFd)' is not "
                    + AcquiredDescriptor.allCases.map(\.rawValue).joined(separator: ", "))
            check(
                NotificationValueType(rawValue: device.valueType) != nil,
                "\(path).valueType: '\(device.valueType)' is not "
                    + NotificationValueType.allCases.map(\.rawValue).joined(separator: ", "))
            if let profile = device.profile {
                check(
                    Profile(rawValue: profile) != nil,
                    "\(path).profile: '\(profile)' is not "
                        + Profile.allCases.map(\.rawValue).joined(separator: ", "))
            }
            check(
                Pairing(rawValue: device.pairing) != nil,
                "\(path).pairing: '\(device.pairing)' is not "
                    + Pairing.allCases.map(\.rawValue).joined(separator: ", "))
            if let pmd = device.pmd {
                check(
                    pmd.ecgAmplitude.isFinite && (0...100_000).contains(pmd.ecgAmplitude),
                    "\(path).pmd.ecgAmplitude: 0 to 100000 microvolts")
                check(
                    pmd.ecgNoise.isFinite && (0...10_000).contains(pmd.ecgNoise),
                    "\(path).pmd.ecgNoise: 0 to 10000 microvolts")
                check(
                    (pmd.clockStart ?? 0) < 1 << 62,
                    "\(path).pmd.clockStart: nanoseconds since 2000-01-01, below 2^62")
                check(device.mtu >= 33, "\(path).mtu: a PMD frame needs an MTU of 33 or more")
            }
            problems += device.heartRate.problems(at: "\(path).heartRate")
        }

        var latestAt = 0.0
        for (i, event) in events.enumerated() {
            let path = "events[\(i)]"
            switch event.trigger {
            case .at(let at):
                check(at >= 0, "\(path).at: negative")
                check(at >= latestAt, "\(path).at: before an event listed earlier (events happen in order)")
                latestAt = max(latestAt, at)
            case .afterNotifications(let count):
                check(count >= 1, "\(path).afterNotifications: needs to be 1 or more")
            case .after(let after):
                check(after >= 0, "\(path).after: negative")
            }
            switch event {
            case .adapterPower(_, let adapter, _):
                if let adapter {
                    check(adapterNames.contains(adapter), "\(path).adapter: no adapter named '\(adapter)'")
                }
            case .bluetoothdRestart(_, let downFor):
                check(
                    (0...Self.longestWait).contains(downFor),
                    "\(path).downFor: 0 to \(Int(Self.longestWait)) seconds")
            case .battery(_, let device, let percent):
                check((0...100).contains(percent), "\(path).percent: 0 to 100")
                let wanted = SimulatedAddress(device)
                check(
                    wanted != nil && devices.contains { SimulatedAddress($0.address) == wanted },
                    "\(path).device: no device with address '\(device)'")
            case .appear(_, let device):
                let wanted = SimulatedAddress(device)
                check(
                    wanted != nil && devices.contains { SimulatedAddress($0.address) == wanted },
                    "\(path).device: no device with address '\(device)'")
            }
        }
        if !problems.isEmpty { throw ScenarioError(problems: problems) }
    }

    /// A list of failures: each a stall or an error with a valid D-Bus error name.
    static func problems(_ failures: [DBusFailure], at path: String) -> [String] {
        failures.enumerated().compactMap { j, failure in
            if failure.stall {
                return failure.error.isEmpty ? nil : "\(path)[\(j)]: a stall has no error"
            }
            return (try? ErrorName(failure.error)) != nil
                ? nil
                : "\(path)[\(j)].error: '\(failure.error)' is not an error name (like org.bluez.Error.Failed)"
        }
    }

    /// The longest wait a scenario may ask for (a notification interval, bluetoothd's downtime), in
    /// seconds: a day, far below what a Duration can hold.
    static let longestWait = 86_400.0

    /// `hci0`: `hci` and ASCII digits, so the name is also a valid object path element.
    static func isAdapterName(_ name: String) -> Bool {
        let digits = name.utf8.dropFirst(3)
        return name.hasPrefix("hci") && !digits.isEmpty
            && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// `107`, `0x006b`: a company identifier.
    static func companyID(_ text: String) -> UInt16? {
        text.hasPrefix("0x") || text.hasPrefix("0X") ? UInt16(text.dropFirst(2), radix: 16) : UInt16(text)
    }

    /// Plain hex (`0e4801`), as scenario files write payloads.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let pair = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(pair)
            i += 2
        }
        return bytes
    }
}

extension Scenario.HeartRateStream {
    func problems(at path: String) -> [String] {
        var problems: [String] = []
        if !(interval > 0 && interval <= Scenario.longestWait) {
            problems.append("\(path).interval: above 0 and at most \(Int(Scenario.longestWait)) seconds")
        }
        if !(0...100).contains(variability) { problems.append("\(path).variability: 0 to 100 bpm") }
        if !(0...100_000).contains(energyPerMinute) {
            problems.append("\(path).energyPerMinute: 0 to 100000 kJ")
        }
        if !["uint8", "uint16"].contains(format) { problems.append("\(path).format: 'uint8' or 'uint16'") }
        if Self.contact(contact) == nil {
            problems.append("\(path).contact: '\(contact)' is not detected, not_detected or unsupported")
        }
        for (i, change) in contactChanges.enumerated() where Self.contact(change.contact) == nil {
            problems.append(
                "\(path).contactChanges[\(i)].contact: '\(change.contact)' is not detected, not_detected or unsupported"
            )
        }
        if let energyStart, !(0...65535).contains(energyStart) {
            problems.append("\(path).energyStart: 0-65535")
        }
        switch mode {
        case .realistic:
            if !(30...240).contains(bpm) { problems.append("\(path).bpm: \(bpm) is outside 30-240") }
            if let climbTo, !(30...240).contains(climbTo) {
                problems.append("\(path).climbTo: \(climbTo) is outside 30-240")
            }
            if !(climbSeconds.isFinite && climbSeconds > 0) {
                problems.append("\(path).climbSeconds: must be above 0")
            }
        case .series:
            if values.isEmpty { problems.append("\(path).values: a series needs at least one value") }
            for (i, value) in values.enumerated()
            where !(0...65535).contains(value) || (format == "uint8" && value > 255) {
                problems.append("\(path).values[\(i)]: \(value) does not fit in \(format)")
            }
        case .frames, .replay:
            if frames.isEmpty { problems.append("\(path).frames: needs at least one frame") }
            for (i, frame) in frames.enumerated() where Scenario.bytes(hex: frame) == nil {
                problems.append("\(path).frames[\(i)]: '\(frame)' is not hex")
            }
        }
        if mode == .replay {
            problems += replayProblems(at: path)
        } else if !times.isEmpty {
            problems.append("\(path).times: only for mode 'replay'")
        }
        return problems
    }

    static func contact(_ text: String) -> HeartRateMeasurement.SensorContact? {
        switch text {
        case "detected": .detected
        case "not_detected": .notDetected
        case "unsupported": .unsupported
        default: nil
        }
    }
}

extension HeartRateGenerator {
    /// The generator a scenario's stream describes (validate the scenario first).
    public init(stream: Scenario.HeartRateStream, maximumFrameLength: Int) {
        var options = Options()
        options.format = stream.format == "uint16" ? .uint16 : .uint8
        options.includeRR = stream.rr
        options.energyStart = stream.energyStart.map { UInt16(clamping: $0) }
        options.energyPerMinute = stream.energyPerMinute
        options.maximumFrameLength = maximumFrameLength
        options.seed = stream.seed
        options.climb = stream.climbTo.map { (to: $0, seconds: stream.climbSeconds) }
        let source: Source =
            switch stream.mode {
            case .realistic: .realistic(baseBPM: stream.bpm, variability: stream.variability)
            case .series: .series(stream.values.map { UInt16(clamping: $0) })
            case .frames: .frames(stream.frames.compactMap { Scenario.bytes(hex: $0) })
            case .replay: .replay(stream.frames.compactMap { Scenario.bytes(hex: $0) })
            }
        self.init(source: source, options: options)
        contact = Scenario.HeartRateStream.contact(stream.contact) ?? .detected
    }
}
