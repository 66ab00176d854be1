import DBus
import HeartRate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The GATT objects and their calls: ReadValue, WriteValue, StartNotify, StopNotify, AcquireNotify.
extension Simulator {
    nonisolated func serviceInterface() -> Interface {
        Interface(
            BlueZName.gattService,
            properties: [
                Property("UUID", type: .string, changes: .constant),
                Property("Device", type: .objectPath, changes: .constant),
                Property("Primary", type: .boolean, changes: .constant),
                Property("Includes", type: .array(.objectPath)),
            ])
    }

    nonisolated func characteristicInterface() -> Interface {
        Interface(
            BlueZName.gattCharacteristic,
            methods: [
                method("ReadValue", input: "a{sv}", output: "ay") { call in try await self.readValue(call) },
                method("WriteValue", input: "aya{sv}") { call in try await self.writeValue(call) },
                method("StartNotify") { call in try await self.startNotify(call) },
                method("StopNotify") { call in try await self.stopNotify(call) },
                method("AcquireNotify", input: "a{sv}", output: "hq") { call in
                    try await self.acquireNotify(call)
                },
                method("AcquireWrite", input: "a{sv}", output: "hq") { _ in throw BlueZError.notSupported },
            ],
            properties: [
                Property("UUID", type: .string, changes: .constant),
                Property("Service", type: .objectPath, changes: .constant),
                Property("Value", type: .array(.byte)),
                Property("Notifying", type: .boolean),
                Property("Flags", type: .array(.string)),
                Property("NotifyAcquired", type: .boolean),
                Property("MTU", type: .uint16),
            ])
    }

    nonisolated func descriptorInterface() -> Interface {
        Interface(
            BlueZName.gattDescriptor,
            methods: [
                method("ReadValue", input: "a{sv}", output: "ay") { call in
                    try await self.readDescriptor(call)
                },
                method("WriteValue", input: "aya{sv}") { _ in throw BlueZError.notPermittedWrite },
            ],
            properties: [
                Property("UUID", type: .string, changes: .constant),
                Property("Characteristic", type: .objectPath, changes: .constant),
                Property("Value", type: .array(.byte)),
            ])
    }

    func exportGATT(_ path: ObjectPath) {
        guard let device = devices[path], !device.gattExported, let connection else { return }
        for service in device.layout.services {
            try? connection.export(
                serviceInterface(), at: service.path,
                properties: [
                    "UUID": .string(service.uuid.description), "Device": .objectPath(path),
                    "Primary": .boolean(true),
                    "Includes": .objectPaths([]),
                ])
            for characteristic in service.characteristics {
                var properties: [String: Value] = [
                    "UUID": .string(characteristic.uuid.description),
                    "Service": .objectPath(service.path), "Value": .bytes([]),
                    "Flags": .strings(characteristic.flags),
                    "MTU": .uint16(UInt16(clamping: device.spec.mtu)),
                ]
                if characteristic.canNotify {
                    properties["Notifying"] = .boolean(false)
                    if characteristic.flags.contains("notify") && device.spec.acquireNotify {
                        properties["NotifyAcquired"] = .boolean(false)
                    }
                }
                try? connection.export(
                    characteristicInterface(), at: characteristic.path,
                    properties: properties)
                if let ccc = characteristic.ccc {
                    try? connection.export(
                        descriptorInterface(), at: ccc.path,
                        properties: [
                            "UUID": .string(ccc.uuid.description),
                            "Characteristic": .objectPath(characteristic.path),
                            "Value": .bytes([]),
                        ])
                }
            }
        }
        devices[path]?.gattExported = true
    }

    /// Removes the GATT objects, children first (as bluetoothd does with Cache = no).
    func unexportGATT(_ path: ObjectPath) {
        guard let device = devices[path], device.gattExported, let connection else { return }
        for service in device.layout.services.reversed() {
            for characteristic in service.characteristics.reversed() {
                if let ccc = characteristic.ccc {
                    connection.unexport(at: ccc.path)
                }
                connection.unexport(at: characteristic.path)
            }
            connection.unexport(at: service.path)
        }
        devices[path]?.gattExported = false
        // The notify sessions lived on the characteristic objects (Cache = no): they are gone too.
        devices[path]?.notifySessions = [:]
    }

    /// The device and characteristic a GATT call is about.
    func characteristic(at path: ObjectPath) throws -> (ObjectPath, GATTLayout.Characteristic) {
        for (devicePath, device) in devices where path.isDescendant(of: devicePath) {
            if let characteristic = device.layout.characteristics.first(where: { $0.path == path }) {
                guard device.gattExported else { throw BlueZError.doesNotExist }
                return (devicePath, characteristic)
            }
        }
        throw BlueZError.doesNotExist
    }

    // MARK: - Failures the scenario asks for

    /// The scenario's next failure for `member` on this device, if one is left: thrown, or a stall
    /// (the call is not answered until the client leaves the bus, bluetoothd restarts or the
    /// simulator stops; the client has given up long before).
    func injectedFailure(_ member: Scenario.GATTCall, on devicePath: ObjectPath, _ call: MethodCall)
        async throws
    {
        guard var left = devices[devicePath]?.callFailuresLeft[member.rawValue], !left.isEmpty else {
            return
        }
        let failure = left.removeFirst()
        devices[devicePath]?.callFailuresLeft[member.rawValue] = left
        if failure.stall {
            log.record("call-stalled", ["path": call.path.rawValue, "member": member.rawValue])
            await stall(sender: call.sender?.rawValue ?? "")
            log.record("stall-ended", ["path": call.path.rawValue, "member": member.rawValue])
            throw BlueZError.failed("the simulator left this call unanswered")
        }
        // The name comes from the scenario (validation checks it); never trap on it.
        guard let name = try? ErrorName(failure.error) else {
            throw BlueZError.failed("\(failure.message) (the scenario's error name is not valid)")
        }
        throw DBusError(name: name, message: failure.message)
    }

    /// Waits until `endStalls` lets this call go (at once when not serving).
    func stall(sender: String) async {
        guard connection != nil else { return }
        nextStall += 1
        let number = nextStall
        await withCheckedContinuation { (end: CheckedContinuation<Void, Never>) in
            stalls[number] = (sender, end)
        }
    }

    /// Lets the stalled calls of `sender` (of everyone when nil) go.
    func endStalls(of sender: String? = nil) {
        for (number, stall) in stalls where sender == nil || stall.sender == sender {
            stalls[number] = nil
            stall.end.resume()
        }
    }

    // MARK: - Calls

    func readValue(_ call: MethodCall) async throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        try await injectedFailure(.readValue, on: devicePath, call)
        guard characteristic.flags.contains("read") else { throw BlueZError.notPermittedRead }
        guard let device = devices[devicePath], device.connected else { throw BlueZError.notConnected }
        let value: [UInt8] =
            switch characteristic.role {
            case .pmdControlPoint: try pmdFeatures(devicePath)
            case .bodySensorLocation: [UInt8(clamping: device.spec.location ?? 0)]
            case .batteryLevel: [UInt8(clamping: device.battery ?? 0)]
            case .deviceInformation(let text): Array(text.utf8)
            case .pnpID: [0x02, 0x6B, 0x1D, 0x46, 0x02, 0x42, 0x05]
            case .clientFeatures: [0x00]
            case .databaseHash: Array(repeating: 0xA5, count: 16)
            case .serverFeatures: [0x01]
            case .measurement, .controlPoint, .serviceChanged, .pmdData: []
            }
        // The read updates Value, and that PropertiesChanged goes out before the reply.
        try? connection?.setProperty(
            "Value", to: .bytes(value), interface: BlueZName.gattCharacteristic, at: call.path)
        return [.bytes(value)]
    }

    func readDescriptor(_ call: MethodCall) throws -> [Value] {
        guard let charPath = call.path.parent else { throw BlueZError.doesNotExist }
        let (devicePath, characteristic) = try characteristic(at: charPath)
        guard devices[devicePath]?.connected == true else { throw BlueZError.notConnected }
        let on =
            !(devices[devicePath]?.notifySessions[characteristic.path] ?? []).isEmpty
            || devices[devicePath]?.acquired[characteristic.path] != nil
        // The CCC's bit 0 enables notifications, bit 1 indications.
        let bit: UInt8 = characteristic.flags.contains("notify") ? 0x01 : 0x02
        let value: [UInt8] = on ? [bit, 0x00] : [0x00, 0x00]
        try? connection?.setProperty(
            "Value", to: .bytes(value), interface: BlueZName.gattDescriptor, at: call.path)
        return [.bytes(value)]
    }

    func writeValue(_ call: MethodCall) async throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        try await injectedFailure(.writeValue, on: devicePath, call)
        guard
            characteristic.flags.contains("write") || characteristic.flags.contains("write-without-response")
        else { throw BlueZError.notSupported }
        guard devices[devicePath]?.connected == true else { throw BlueZError.notConnected }
        let (bytes, _) = try call.decode([UInt8].self, [String: Value].self)
        switch characteristic.role {
        case .controlPoint:
            guard bytes == HeartRateControlPoint.resetEnergyExpended.encoded else {
                throw BlueZError.failed("Operation failed with ATT error: 0x80")
            }
            devices[devicePath]?.generator.resetEnergyExpended()
            log.record("energy-reset", ["path": devicePath.rawValue])
        case .pmdControlPoint:
            return try await pmdWrite(devicePath, bytes, call)
        default:
            break
        }
        return []
    }

    func startNotify(_ call: MethodCall) async throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        try await injectedFailure(.startNotify, on: devicePath, call)
        guard characteristic.canNotify else { throw BlueZError.notSupported }
        guard let device = devices[devicePath] else { throw BlueZError.doesNotExist }
        // bluetoothd 5.66 (gatt-client.c): StartNotify while the notifications are acquired.
        guard device.acquired[characteristic.path] == nil else { throw BlueZError.notPermittedAcquired }
        let client = call.sender?.rawValue ?? ""
        var sessions = device.notifySessions[characteristic.path] ?? []
        guard !sessions.contains(client) else { throw BlueZError.alreadyInProgress }
        sessions.insert(client)
        devices[devicePath]?.notifySessions[characteristic.path] = sessions
        if sessions.count == 1 && device.connected {
            try? connection?.setProperty(
                "Notifying", to: .boolean(true), interface: BlueZName.gattCharacteristic, at: call.path)
        }
        return []
    }

    func stopNotify(_ call: MethodCall) async throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        try await injectedFailure(.stopNotify, on: devicePath, call)
        let client = call.sender?.rawValue ?? ""
        guard devices[devicePath]?.notifySessions[characteristic.path]?.remove(client) != nil else {
            throw BlueZError.failed("No notify session started")
        }
        if devices[devicePath]?.notifySessions[characteristic.path]?.isEmpty == true {
            try? connection?.setProperty(
                "Notifying", to: .boolean(false), interface: BlueZName.gattCharacteristic, at: call.path)
        }
        return []
    }

    func acquireNotify(_ call: MethodCall) async throws -> [Value] {
        let (devicePath, characteristic) = try characteristic(at: call.path)
        try await injectedFailure(.acquireNotify, on: devicePath, call)
        guard characteristic.flags.contains("notify") else { throw BlueZError.notSupported }
        guard let device = devices[devicePath], device.connected else { throw BlueZError.notConnected }
        guard device.spec.acquireNotify else { throw BlueZError.notSupported }
        guard (device.notifySessions[characteristic.path] ?? []).isEmpty else { throw BlueZError.inProgress }
        guard device.acquired[characteristic.path] == nil else { throw BlueZError.notPermittedAcquired }
        let kind = Scenario.AcquiredDescriptor(rawValue: device.spec.acquireFd) ?? .seqpacket
        let (ours, theirs) = try Self.descriptors(kind)
        if let ours {
            let flags = fcntl(ours, F_GETFL)
            _ = fcntl(ours, F_SETFL, flags | O_NONBLOCK)
            devices[devicePath]?.acquired[characteristic.path] = ours
            try? connection?.setProperty(
                "NotifyAcquired", to: .boolean(true), interface: BlueZName.gattCharacteristic, at: call.path)
        } else {
            // Nothing here can see the client close a file or /dev/null: no acquisition to hold.
            log.record("acquire-unwatched", ["path": call.path.rawValue, "fd": kind.rawValue])
        }
        // The client's end is the client's once the reply is out: no copy of it lingers here (a
        // client in this process closing its end would not be a hang-up while one did).
        let handedOut = UnixFD(taking: theirs)
        call.afterReply { handedOut.close() }
        return [.unixFD(handedOut), .uint16(UInt16(clamping: device.spec.mtu))]
    }

    /// The two ends of what AcquireNotify hands out: the simulator's (the frames go in there; nil
    /// when there is none to write to and watch) and the client's.
    static func descriptors(_ kind: Scenario.AcquiredDescriptor) throws -> (ours: Int32?, theirs: Int32) {
        var pair: [Int32] = [-1, -1]
        func fail(_ what: String) -> DBusError { BlueZError.failed("\(what): \(systemErrorText())") }
        switch kind {
        case .seqpacket, .stream:
            let type = kind == .seqpacket ? SOCK_SEQPACKET : SOCK_STREAM
            guard socketpair(AF_UNIX, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0
            else {
                throw fail("socketpair")
            }
            return (pair[0], pair[1])
        case .pipe:
            guard pipe(&pair) == 0 else { throw fail("pipe") }
            for fd in pair { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            // Writing to a pipe whose reader is gone raises SIGPIPE (send's MSG_NOSIGNAL is for
            // sockets): the simulated bluetoothd ignores it, as daemons do. Child processes get
            // the default back (ChildProcess).
            signal(SIGPIPE, SIG_IGN)
            return (pair[1], pair[0])
        case .file:
            var template = Array("/tmp/hrm-sim-acquire-XXXXXX".utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
                guard let name = buffer.baseAddress else { return -1 }
                let fd = mkstemp(name)
                if fd >= 0 { unlink(name) }
                return fd
            }
            guard fd >= 0 else { throw fail("mkstemp") }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return (nil, fd)
        case .devnull:
            let fd = open("/dev/null", O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { throw fail("open /dev/null") }
            return (nil, fd)
        }
    }

}
