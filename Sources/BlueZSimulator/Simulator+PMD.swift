import DBus
import PolarPMD
import Threads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One PMD measurement streaming on the data characteristic: its settings, where its samples
/// are, and the task that sends a frame whenever the frame's last sample is due.
struct PMDStream: Sendable {
    let type: PMDMeasurementType
    let rate: Int
    let rangeG: Int
    let compressed: Bool
    /// Samples in one frame: as many as fit the link's MTU, capped at the H10's 232 (73 ECG
    /// samples, 36 acceleration samples).
    let perFrame: Int
    /// The scenario time of sample 0, in nanoseconds.
    let startNanos: Int64
    /// Which start this is (a stopped stream's task that wakes late sends nothing).
    let generation: Int
    var nextSample = 0
    var task: Task<Void, Never>? = nil
    var ecg: ECGSynthesis
    var acc: ACCSynthesis

    /// The scenario time of sample `index`, in nanoseconds.
    func nanos(_ index: Int) -> Int64 { startNanos + Int64(index) * 1_000_000_000 / Int64(rate) }
}

/// What a start command leads to: a stream, or the status refusing it.
enum PMDStartDecision: Sendable {
    case start(PMDStream)
    case refuse(PMDResponseStatus)
}

/// Polar's PMD service as an H10 plays it: the control point (features, get settings, start,
/// stop) and the data characteristic's ECG and acceleration frames.
///
/// Until the device is paired, a write to the control point is never answered (the lab's
/// finding: bluetoothd waits for the link's encryption) and a read fails at once with
/// NotPermitted "Not paired". Once paired, a write is answered at once and its response comes
/// after the reply as an indication (a `Value` change of the control point, to StartNotify
/// sessions). Frames go to the data characteristic's StartNotify sessions and AcquireNotify
/// socket. A link that goes down stops every stream.
extension Simulator {
    /// What an H10 offers, by measurement type.
    static let pmdOffered: [PMDMeasurementType: [PMDSettingType: [Int]]] = [
        .ecg: [.sampleRate: [130], .resolution: [14]],
        .acc: [.sampleRate: [25, 50, 100, 200], .resolution: [16], .range: [2, 4, 8]],
    ]

    /// The H10's largest ATT MTU: frames are sized to it.
    static let pmdMaximumMTU = 232

    /// The sensor clock at scenario time `nanos` (the scenario's `clockStart` at the simulator's start).
    func sensorNanos(_ device: DeviceState, _ nanos: Int64) -> UInt64 {
        let start = device.spec.pmd?.clockStart ?? PMDTime.h10DefaultClock
        return start &+ UInt64(max(nanos, 0))
    }

    // MARK: - The control point

    /// ReadValue of the control point: the features, once paired.
    func pmdFeatures(_ devicePath: ObjectPath) throws -> [UInt8] {
        guard devices[devicePath]?.paired == true else {
            log.record(
                "pmd-refused", ["path": devicePath.rawValue, "member": "ReadValue", "reason": "not-paired"])
            throw BlueZError.notPaired
        }
        return PMDFeatures.encode([.ecg, .acc])
    }

    /// WriteValue of the control point. Unpaired: never answered (until the caller leaves the
    /// bus, the link goes, or `Timing.unansweredWrite` has passed: the caller gave up long
    /// before). Paired: answered at once; the command runs after the reply.
    func pmdWrite(_ devicePath: ObjectPath, _ bytes: [UInt8], _ call: MethodCall) async throws -> [Value] {
        let hex = Self.hex(bytes)
        guard devices[devicePath]?.paired == true else {
            log.record(
                "pmd-unanswered",
                ["path": call.path.rawValue, "member": "WriteValue", "reason": "not-paired", "hex": hex])
            await leaveUnanswered(sender: call.sender?.rawValue ?? "", device: devicePath)
            log.record("pmd-unanswered-ended", ["path": call.path.rawValue, "member": "WriteValue"])
            throw BlueZError.failed("Operation failed")
        }
        nextPMDCommand += 1
        let number = nextPMDCommand
        devices[devicePath]?.pmdCommands.append((number, bytes))
        call.afterReply {
            Task { await self.runPMDCommands(devicePath, through: number) }
        }
        return []
    }

    /// Runs the commands written up to the one numbered `number` (whose reply is out), in the
    /// order written, however the tasks that run them are scheduled.
    func runPMDCommands(_ devicePath: ObjectPath, through number: Int) {
        while let next = devices[devicePath]?.pmdCommands.first, next.number <= number {
            devices[devicePath]?.pmdCommands.removeFirst()
            pmdCommand(devicePath, next.bytes)
        }
    }

    /// Runs a command written to the control point and indicates its response.
    func pmdCommand(_ devicePath: ObjectPath, _ bytes: [UInt8]) {
        guard let device = devices[devicePath], device.connected, let op = bytes.first,
            let controlPoint = device.layout.characteristics.first(where: { $0.role == .pmdControlPoint })
        else { return }
        let typeByte = bytes.count > 1 ? bytes[1] : 0
        let type = PMDMeasurementType(rawValue: typeByte)
        var status = PMDResponseStatus.success
        var parameters: [UInt8] = []
        var started: PMDStream? = nil
        switch PMDOpCode(rawValue: op) {
        case .getMeasurementSettings?:
            if bytes.count < 2 {
                status = .invalidLength
            } else if typeByte & 0x80 != 0 {
                status = .notSupported
            } else if let offered = Self.pmdOffered[type] {
                // The H10's offer is constant: encoding it cannot fail.
                parameters = (try? PMDAvailableSettings.encode(offered)) ?? []
            } else {
                status = .invalidMeasurementType
            }
        case .requestMeasurementStart?:
            switch pmdStart(devicePath, bytes) {
            case .start(let stream): started = stream
            case .refuse(let refused): status = refused
            }
        case .stopMeasurement?:
            if bytes.count < 2 {
                status = .invalidLength
            } else if Self.pmdOffered[type] == nil {
                status = .invalidMeasurementType
            } else if device.pmdStreams[type.rawValue] == nil {
                status = .alreadyInState
            } else {
                stopPMDStream(devicePath, type, reason: "command")
            }
        default:
            status = .invalidOpCode
        }
        let response: [UInt8] =
            [PMDResponse.marker, op, typeByte, status.rawValue]
            + (status == .success ? [0] + parameters : [0])
        let indicated = !(device.notifySessions[controlPoint.path] ?? []).isEmpty
        log.record(
            "pmd-command",
            [
                "path": devicePath.rawValue, "hex": Self.hex(bytes), "op": Int(op), "type": Int(typeByte),
                "status": status.code, "response": Self.hex(response), "indicated": indicated,
                "mono_ns": monotonicNanos(),
            ])
        // The indication reaches bluetoothd only while a client has enabled it (StartNotify).
        if indicated {
            try? connection?.setProperty(
                "Value", to: .bytes(response), interface: BlueZName.gattCharacteristic, at: controlPoint.path)
        }
        if var stream = started {
            let mtu = min(device.spec.mtu, Self.pmdMaximumMTU)
            log.record(
                "pmd-start",
                [
                    "path": devicePath.rawValue, "type": type.description, "rate": stream.rate,
                    "range": stream.rangeG, "compressed": stream.compressed,
                    "samples_per_frame": stream.perFrame,
                    "first_sample_ns": sensorNanos(device, stream.nanos(0)), "mtu": mtu,
                    "mono_ns": monotonicNanos(),
                ])
            stream.task = pmdPump(devicePath, stream)
            devices[devicePath]?.pmdStreams[type.rawValue] = stream
        }
    }

    /// A start command checked against what the H10 offers: the stream to start, or the status
    /// refusing it (a value not offered: invalid sample rate, resolution or range; a setting the
    /// measurement has not, a count other than 1 or malformed settings: invalid parameter).
    /// Settings left out take the H10's defaults (the largest rate and range).
    func pmdStart(_ devicePath: ObjectPath, _ bytes: [UInt8]) -> PMDStartDecision {
        guard let device = devices[devicePath], let pmd = device.spec.pmd else {
            return .refuse(.notSupported)
        }
        guard bytes.count >= 2 else { return .refuse(.invalidLength) }
        let typeByte = bytes[1]
        guard typeByte & 0x80 == 0 else { return .refuse(.notSupported) }
        let type = PMDMeasurementType(rawValue: typeByte)
        guard let offered = Self.pmdOffered[type] else { return .refuse(.invalidMeasurementType) }
        guard device.pmdStreams[type.rawValue] == nil else { return .refuse(.alreadyInState) }
        guard let settings = try? PMDAvailableSettings(decoding: bytes[2...]), settings.securityKeys.isEmpty
        else { return .refuse(.invalidParameter) }
        for (setting, values) in settings.values {
            guard values.count == 1, let allowed = offered[setting] else { return .refuse(.invalidParameter) }
            guard allowed.contains(values[0]) else {
                switch setting {
                case .sampleRate: return .refuse(.invalidSampleRate)
                case .resolution: return .refuse(.invalidResolution)
                case .range: return .refuse(.invalidRange)
                default: return .refuse(.invalidParameter)
                }
            }
        }
        let rate = settings[.sampleRate].first ?? (offered[.sampleRate]?.max() ?? 130)
        let rangeG = settings[.range].first ?? (offered[.range]?.max() ?? 8)
        let compressed = type == .acc && pmd.accCompressed
        let room = min(device.spec.mtu, Self.pmdMaximumMTU) - 3 - PMDDataFrame.headerLength
        let perFrame = max(1, type == .ecg ? room / 3 : room / 6)
        nextPMDGeneration += 1
        // The first sample is taken a sample's time after the start.
        let startNanos = Int64((now * 1e9).rounded()) + 1_000_000_000 / Int64(rate)
        return .start(
            PMDStream(
                type: type, rate: rate, rangeG: rangeG, compressed: compressed, perFrame: perFrame,
                startNanos: startNanos, generation: nextPMDGeneration,
                ecg: ECGSynthesis(amplitude: pmd.ecgAmplitude, noise: pmd.ecgNoise, seed: pmd.seed),
                acc: ACCSynthesis(seed: pmd.seed &+ 2)))
    }

    /// Sends the stream's frames, each when its last sample is due: times are counted from the
    /// stream's start, so the pace never drifts; a late wake sends what is due at once.
    func pmdPump(_ devicePath: ObjectPath, _ stream: PMDStream) -> Task<Void, Never> {
        let log = self.log
        return Task { [weak self] in
            var frame = 1
            while !Task.isCancelled {
                let due = Double(stream.nanos(frame * stream.perFrame - 1)) / 1e9
                let wait = due - log.seconds
                if wait > 0 { try? await Task.sleep(for: .seconds(wait)) }
                if Task.isCancelled { return }
                guard await self?.sendPMDFrame(devicePath, stream.type, stream.generation) == true else {
                    return
                }
                frame += 1
            }
        }
    }

    /// Synthesises and sends the stream's next frame; false once the stream is gone.
    func sendPMDFrame(_ devicePath: ObjectPath, _ type: PMDMeasurementType, _ generation: Int) -> Bool {
        guard var device = devices[devicePath], var stream = device.pmdStreams[type.rawValue],
            stream.generation == generation, device.connected
        else { return false }
        let first = stream.nextSample
        let last = first + stream.perFrame - 1
        let timestamp = sensorNanos(device, stream.nanos(last))
        let frame: [UInt8]
        if type == .ecg {
            let from = Double(stream.nanos(first)) / 1e9
            let to = Double(stream.nanos(last)) / 1e9
            var beats = device.generator.beats(through: to + ECGSynthesis.reach.before)
            if beats.isEmpty { beats = Self.regularBeats(bpm: device.spec.heartRate.bpm, from: from, to: to) }
            let near = beats.filter {
                $0 > from - ECGSynthesis.reach.after && $0 < to + ECGSynthesis.reach.before
            }
            var microvolts: [Int32] = []
            microvolts.reserveCapacity(stream.perFrame)
            for index in first...last {
                let value = stream.ecg.value(at: Double(stream.nanos(index)) / 1e9, beats: near[...])
                microvolts.append(Int32(value.rounded()))
            }
            frame = PMDDataFrame.encode(
                type: .ecg, timestamp: timestamp, frameType: 0, content: PMDECGValues.encodeType0(microvolts))
        } else {
            var values: [Int32] = []
            values.reserveCapacity(3 * stream.perFrame)
            for index in first...last {
                let (x, y, z) = stream.acc.value(at: Double(stream.nanos(index)) / 1e9, rangeG: stream.rangeG)
                values += [x, y, z]
            }
            let content =
                stream.compressed
                ? PMDDeltaCoding.encode(values, channels: 3, resolution: 16)
                : (PMDACCValues.encodeRaw(values, frameType: 1) ?? [])
            frame = PMDDataFrame.encode(
                type: .acc, timestamp: timestamp, frameType: 1, compressed: stream.compressed,
                content: content)
        }
        stream.nextSample = last + 1
        device.pmdStreams[type.rawValue] = stream
        devices[devicePath] = device
        deliverPMD(frame, devicePath, type: type, timestamp: timestamp, samples: stream.perFrame)
        return true
    }

    /// Beats at a steady `bpm` (a strap whose heart-rate stream is not realistic): R peaks on a
    /// grid from time 0.
    static func regularBeats(bpm: Double, from: Double, to: Double) -> [Double] {
        let period = 60 / min(max(bpm, 20), 240)
        let firstBeat = ((from - 1) / period).rounded(.down)
        let lastBeat = ((to + 1) / period).rounded(.up)
        guard firstBeat <= lastBeat else { return [] }
        return (Int(firstBeat)...Int(lastBeat)).map { Double($0) * period }
    }

    /// Sends a frame on the data characteristic to its AcquireNotify socket and StartNotify sessions.
    func deliverPMD(
        _ frame: [UInt8], _ devicePath: ObjectPath, type: PMDMeasurementType, timestamp: UInt64, samples: Int
    ) {
        guard let device = devices[devicePath],
            let data = device.layout.characteristics.first(where: { $0.role == .pmdData })
        else { return }
        var via: [String] = []
        let sentAt = monotonicNanos()
        if let fd = device.acquired[data.path] {
            let sent = Self.sendFrame(frame, to: fd)
            if sent < 0 && (errno == EPIPE || errno == ECONNRESET) {
                close(fd)
                devices[devicePath]?.acquired[data.path] = nil
                try? connection?.setProperty(
                    "NotifyAcquired", to: .boolean(false), interface: BlueZName.gattCharacteristic,
                    at: data.path)
                log.record("acquire-released", ["path": data.path.rawValue])
            } else if sent >= 0 {
                via.append("fd")
            }
        }
        if !(device.notifySessions[data.path] ?? []).isEmpty {
            try? connection?.setProperty(
                "Value", to: .bytes(frame), interface: BlueZName.gattCharacteristic, at: data.path)
            via.append("signal")
        }
        log.record(
            "pmd-frame",
            [
                "path": data.path.rawValue, "type": type.description, "sensor_ns": timestamp,
                "samples": samples,
                "via": via, "hex": Self.hex(frame), "mono_ns": sentAt,
            ])
    }

    // MARK: - Stopping

    func stopPMDStream(_ devicePath: ObjectPath, _ type: PMDMeasurementType, reason: String) {
        guard let stream = devices[devicePath]?.pmdStreams.removeValue(forKey: type.rawValue) else { return }
        stream.task?.cancel()
        log.record("pmd-stop", ["path": devicePath.rawValue, "type": type.description, "reason": reason])
    }

    /// Stops every stream of the device (the link went, bluetoothd restarted, the simulator stops).
    func stopPMD(_ devicePath: ObjectPath, reason: String) {
        devices[devicePath]?.pmdCommands = []
        guard let streams = devices[devicePath]?.pmdStreams else { return }
        for key in streams.keys.sorted() {
            stopPMDStream(devicePath, PMDMeasurementType(rawValue: key), reason: reason)
        }
    }

    // MARK: - Writes left unanswered

    /// Waits until `endUnansweredWrites` lets this call go, or `Timing.unansweredWrite` passes
    /// (the timeline's tick looks): nothing is held for ever.
    func leaveUnanswered(sender: String, device: ObjectPath) async {
        guard connection != nil else { return }
        nextStall += 1
        let number = nextStall
        let deadline = now + timing.unansweredWrite
        await withCheckedContinuation { (end: CheckedContinuation<Void, Never>) in
            unansweredWrites[number] = (sender, device, deadline, end)
        }
    }

    /// Lets the unanswered writes of `sender`, of `device`, past `deadline`, or all go.
    func endUnansweredWrites(
        of sender: String? = nil, device: ObjectPath? = nil, dueBy deadline: Double? = nil
    ) {
        for (number, write) in unansweredWrites
        where (sender == nil || write.sender == sender) && (device == nil || write.device == device)
            && (deadline == nil || write.deadline <= (deadline ?? 0))
        {
            unansweredWrites[number] = nil
            write.end.resume()
        }
    }
}
