import BlueZ
import ECG
import Logging
package import PolarPMD

/// One connection's ECG and acceleration streams from a strap's PMD service, as polar-ble-sdk's
/// `BlePMDClient` runs them: read the features (pairing first when the strap wants an encrypted
/// link), enable the control point's indications (StartNotify: BlueZ offers no AcquireNotify for
/// an indication) and the data's notifications, start each
/// measurement and check its response, then decode every data frame into `ecg`/`acc` events
/// and the R peaks found in the ECG into `ecg_beat` events, until the link drops.
///
/// It runs beside the heart-rate stream, never in its way: whatever fails here is an `error`
/// event and heart rate goes on. Every call has a short timeout, because a write to the control
/// point over an unpaired link may get no answer at all (BLUEZ-NOTES).
struct PMDSession: Sendable {
    let client: BlueZClient
    let target: DiscoveredDevice
    let pipeline: EventPipeline
    let streams: SensorStreams
    let log: Logger
    /// How to take the data characteristic's frames: AcquireNotify where offered (a socket, no
    /// D-Bus signal per frame), or StartNotify with `--share`.
    var dataMethod: NotifyMethod = .automatic

    /// How long a read, a write or a response may take.
    static let commandTimeout: Duration = .seconds(5)
    /// How long pairing may take (a strap asleep does not answer).
    static let pairingTimeout: Duration = .seconds(30)

    static let serviceUUID = BluetoothUUID(high: 0xFB00_5C80_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
    static let controlPointUUID = BluetoothUUID(high: 0xFB00_5C81_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
    static let dataUUID = BluetoothUUID(high: 0xFB00_5C82_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)

    /// How a session ended.
    enum Outcome: Sendable, Equatable {
        /// The streams ran until the link dropped or the session stopped.
        case streamed
        /// The strap has no PMD service (or not the measurement asked for): said once per run.
        case unavailable
        /// Pairing or starting failed: said; the next connection tries again.
        case failed
    }

    private var address: String { target.address.description }

    private func report(_ code: EventErrorCode, _ message: String, hex: String? = nil) {
        log.info("\(code.rawValue): \(message)")
        pipeline.send(MonitorEvent(device: address, kind: .error(code: code, message: message, hex: hex)))
    }

    /// Runs the streams until the link drops (or the task is cancelled: the streams are stopped
    /// then, so the strap stops sending). `sayUnavailable` is false once a run has said that the
    /// strap has no PMD.
    func run(sayUnavailable: Bool) async -> Outcome {
        await client.settleServices(of: target.path)
        guard let controlPoint = await client.characteristic(Self.controlPointUUID, of: target.path),
            let data = await client.characteristic(Self.dataUUID, of: target.path)
        else {
            if sayUnavailable {
                report(
                    .pmdUnavailable,
                    "the strap has no PMD service (Polar Measurement Data): --ecg and --acc need a strap that streams them, such as a Polar H10; heart rate goes on"
                )
            }
            return .unavailable
        }
        guard let features = await features(controlPoint) else { return .failed }
        let wanted = measurements()
        let missing = wanted.filter { !features.offers($0.type) }
        if !missing.isEmpty {
            if sayUnavailable {
                let names = missing.map { $0.type == .ecg ? "ECG" : "acceleration" }.joined(
                    separator: " and ")
                report(.pmdUnavailable, "the strap does not offer \(names) through PMD; heart rate goes on")
            }
            if missing.count == wanted.count { return .unavailable }
        }
        let mailbox = ControlPointMailbox()
        let responses: AsyncStream<NotificationEvent>
        let frames: AsyncStream<NotificationEvent>
        do throws(BlueZError) {
            responses = try await client.notifications(
                controlPoint, using: .startNotify, inline: mailbox.deliver)
            frames = try await client.notifications(data, using: dataMethod)
        } catch {
            if !Task.isCancelled {
                report(.pmdStartFailed, "cannot subscribe to the strap's PMD service: \(error.message)")
            }
            await release(controlPoint, data)
            return .failed
        }
        let watcher = Task {
            for await _ in responses {}
            mailbox.close()
        }
        defer { watcher.cancel() }
        var decoder = PMDDecoder()
        var started: [(type: PMDMeasurementType, settings: PMDSelectedSettings)] = []
        for measurement in wanted where features.offers(measurement.type) {
            guard let response = await start(measurement, controlPoint, mailbox) else { continue }
            decoder.started(
                measurement.type, selected: measurement.settings,
                response: (try? response.settings()) ?? PMDAvailableSettings())
            started.append(measurement)
        }
        guard !started.isEmpty else {
            await release(controlPoint, data)
            return .failed
        }
        var reader = FrameReader(device: address, streams: streams, decoder: decoder)
        for await event in frames {
            guard case .value(let bytes) = event else { continue }
            for output in reader.read(bytes) { pipeline.send(output) }
        }
        if Task.isCancelled {
            // From a task of its own: a cancelled task's calls are not sent.
            await Task { [self] in
                for measurement in started {
                    try? await client.write(
                        controlPoint, PMDCommand.stop(measurement.type).bytes, timeout: .seconds(2))
                }
                await release(controlPoint, data)
            }.value
        }
        return .streamed
    }

    /// The measurements asked for, with their settings.
    private func measurements() -> [(type: PMDMeasurementType, settings: PMDSelectedSettings)] {
        var list: [(type: PMDMeasurementType, settings: PMDSelectedSettings)] = []
        if streams.ecg { list.append((.ecg, .h10ECG)) }
        if let acc = streams.acc { list.append((.acc, .h10ACC(rate: acc.rateHz, rangeG: acc.rangeG))) }
        return list
    }

    private func release(_ controlPoint: Characteristic, _ data: Characteristic) async {
        await client.releaseNotifications(data)
        await client.releaseNotifications(controlPoint)
    }

    /// The features the control point offers, pairing first when the strap refuses an unpaired
    /// read (or does not answer it); nil when that failed (said).
    private func features(_ controlPoint: Characteristic) async -> PMDFeatures? {
        do throws(BlueZError) {
            return try await readFeatures(controlPoint)
        } catch {
            guard !Task.isCancelled else { return nil }
            guard Self.wantsPairing(error) else {
                report(.pmdStartFailed, "cannot read the strap's PMD features: \(error.message)")
                return nil
            }
            log.info("the strap's PMD service needs pairing (\(error.message)): pairing")
        }
        do throws(BlueZError) {
            _ = try await client.pair(target.path, timeout: Self.pairingTimeout)
        } catch {
            if !Task.isCancelled {
                report(
                    .init(error.code),
                    "\(error.message); the strap's ECG and acceleration need pairing: heart rate goes on (hrm pair \(address) pairs it ahead)"
                )
            }
            return nil
        }
        do throws(BlueZError) {
            return try await readFeatures(controlPoint)
        } catch {
            if !Task.isCancelled {
                report(
                    .pmdStartFailed, "cannot read the strap's PMD features after pairing: \(error.message)")
            }
            return nil
        }
    }

    private func readFeatures(_ controlPoint: Characteristic) async throws(BlueZError) -> PMDFeatures {
        let value = try await client.read(controlPoint, timeout: Self.commandTimeout)
        guard case .features(let features)? = try? PMDControlPointValue(decoding: value[...]) else {
            throw BlueZError(
                .bluez,
                "the control point answered \(HexPayload.format(value)), not a feature list (0x0F ...)")
        }
        return features
    }

    /// bluetoothd's answers that mean "pair first": NotPermitted "Not paired" (5.66 on an
    /// encrypted read), an ATT authentication or encryption error, or no answer at all.
    static func wantsPairing(_ error: BlueZError) -> Bool {
        if error.code == .timeout { return true }
        switch error.reply {
        case .notPermitted?, .notAuthorized?, .authenticationFailed?: return true
        default:
            let text = error.message.lowercased()
            return text.contains("not paired") || text.contains("insufficient authentication")
                || text.contains("insufficient encryption")
        }
    }

    /// Starts `measurement` and returns its response, or nil when it failed (said). A stream
    /// already running (left by a run that ended without stopping it) is stopped and started
    /// again.
    private func start(
        _ measurement: (type: PMDMeasurementType, settings: PMDSelectedSettings),
        _ controlPoint: Characteristic,
        _ mailbox: ControlPointMailbox
    ) async -> PMDResponse? {
        let name = measurement.type == .ecg ? "ECG" : "acceleration"
        guard let command = try? PMDCommand.start(measurement.type, measurement.settings) else {
            report(.pmdStartFailed, "the \(name) settings do not fit a PMD command")
            return nil
        }
        for attempt in 1...2 {
            let answer = await send(command, to: controlPoint, mailbox)
            guard case .success(let response) = answer else {
                if case .failure(let message) = answer, !Task.isCancelled {
                    report(.pmdStartFailed, "the strap did not start its \(name) stream: \(message)")
                }
                return nil
            }
            switch response.status {
            case .success:
                log.info("\(name) stream started", metadata: ["settings": "\(measurement.settings.values)"])
                return response
            case .alreadyInState where attempt == 1:
                log.info("the \(name) stream was running already: stopping it and starting it again")
                _ = await send(PMDCommand.stop(measurement.type), to: controlPoint, mailbox)
            default:
                report(
                    .pmdStartFailed,
                    "the strap refused to start its \(name) stream: \(response.status.code) (\(response.status.message))"
                )
                return nil
            }
        }
        return nil
    }

    /// Writes `command` and waits for its response; `.failure` says why none came.
    private func send(_ command: PMDCommand, to controlPoint: Characteristic, _ mailbox: ControlPointMailbox)
        async -> Result<PMDResponse, SendFailure>
    {
        mailbox.drain()
        do throws(BlueZError) {
            try await client.write(controlPoint, command.bytes, timeout: Self.commandTimeout)
        } catch {
            let hint = Self.wantsPairing(error) ? " (pairing may be needed: hrm pair \(address))" : ""
            return .failure(SendFailure("\(error.message)\(hint)"))
        }
        let deadline = ContinuousClock.now + Self.commandTimeout
        while true {
            let left = deadline - .now
            guard left > .zero, let value = await mailbox.next(timeout: left) else {
                return .failure(
                    SendFailure("no response within \(Self.commandTimeout.components.seconds) s"))
            }
            guard case .response(let response)? = try? PMDControlPointValue(decoding: value[...]),
                response.opCode == command.op.rawValue, response.type == command.type
            else { continue }
            return .success(response)
        }
    }

    struct SendFailure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }
}

/// Turns the data characteristic's frames into events: decoded samples, lost frames counted,
/// R peaks found in the ECG.
package struct FrameReader {
    let device: String
    let streams: SensorStreams
    var decoder: PMDDecoder
    var detector = RPeakDetector(sampleRate: 130)

    /// A reader of `device`'s frames, for `streams`, decoding with `decoder` (told of the
    /// streams' start).
    package init(device: String, streams: SensorStreams, decoder: PMDDecoder) {
        self.device = device
        self.streams = streams
        self.decoder = decoder
    }

    /// The events of one notification of the data characteristic.
    package mutating func read(_ bytes: [UInt8]) -> [MonitorEvent] {
        let decoded: PMDDecodedFrame
        do throws(PMDError) {
            decoded = try decoder.decode(bytes[...])
        } catch {
            return [
                MonitorEvent(
                    device: device,
                    kind: .error(
                        code: .malformedPMDFrame, message: "a PMD data frame that does not decode: \(error)",
                        hex: HexPayload.format(bytes)))
            ]
        }
        // One moment for the frame and the peaks it closed.
        let (time, instant) = (Timestamp.now(), ContinuousInstant.now)
        func event(_ kind: MonitorEvent.Kind, payload: [UInt8]? = nil) -> MonitorEvent {
            MonitorEvent(time: time, instant: instant, device: device, kind: kind, payload: payload)
        }
        switch decoded.data {
        case .ecg(let samples):
            guard let first = samples.first else { return [] }
            var events: [MonitorEvent] = []
            if decoded.missingSamples > 0 {
                // The peaks the detector still held before the gap, then a new start: a gap
                // would read as one long RR interval.
                events += detector.finish().map { event(.ecgBeat(Self.beat($0))) }
                detector.reset()
            }
            events.append(
                event(
                    .ecg(
                        ECGFrame(
                            sensorNanoseconds: first.timestamp, rateHz: 130,
                            microvolts: samples.map(\.microvolts), missingSamples: decoded.missingSamples)),
                    payload: bytes))
            for sample in samples {
                let sampleTime = Int64(clamping: sample.timestamp)
                guard let peak = detector.process(Double(sample.microvolts), time: sampleTime) else {
                    continue
                }
                events.append(event(.ecgBeat(Self.beat(peak))))
            }
            return events
        case .acc(let samples):
            guard let first = samples.first, let acc = streams.acc else { return [] }
            return [
                event(
                    .acc(
                        ACCFrame(
                            sensorNanoseconds: first.timestamp, rateHz: acc.rateHz, rangeG: acc.rangeG,
                            milliG: samples.map { (x: $0.x, y: $0.y, z: $0.z) },
                            missingSamples: decoded.missingSamples)),
                    payload: bytes)
            ]
        case .other:
            return []
        }
    }

    /// A peak as an event's beat: RR to the microsecond.
    static func beat(_ peak: RPeak) -> ECGBeat {
        ECGBeat(
            sensorNanoseconds: UInt64(clamping: peak.time),
            rrMilliseconds: peak.rrMilliseconds.map { ($0 * 1000).rounded() / 1000 })
    }
}
