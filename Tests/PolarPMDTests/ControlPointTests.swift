import Testing

@testable import PolarPMD

/// Features, commands, settings and responses, with polar-ble-sdk's own test vectors where it has
/// them (`PmdSettingTest`, `BlePmdClientControlPointResponseTest`, `BlePmdClientTest`).
@Suite struct ControlPointTests {
    @Test func featuresOfAnH10() throws {
        let features = try PMDFeatures(decoding: [0x0F, 0x05, 0x00][...])
        #expect(features.types == [.ecg, .acc])
        #expect(features.offers(.ecg) && features.offers(.acc) && !features.offers(.ppg))
    }

    @Test func everyFeatureBitTheSDKKnows() throws {
        // Bits 4 and 8 stand for no type the SDK defines: ignored, as its fromByteArray does.
        let features = try PMDFeatures(decoding: [0x0F, 0xFF, 0x7F][...])
        #expect(features.types == PMDMeasurementType.known)
        let two = try PMDFeatures(decoding: [0x0F, 0x10, 0x01][...])
        #expect(two.types.isEmpty)
        #expect(two.bitmask == [0x10, 0x01])
    }

    @Test func malformedFeatureReads() {
        #expect(throws: PMDError(.empty, "the control point's value has no bytes")) {
            try PMDFeatures(decoding: [][...])
        }
        #expect(throws: PMDError.self) { try PMDFeatures(decoding: [0xF0, 0x05][...]) }
        do {
            _ = try PMDFeatures(decoding: [0x0F][...])
            Issue.record("no bitmask accepted")
        } catch {
            #expect(error.code == .truncatedFeatures)
            #expect(error.offset == 1)
        }
    }

    @Test func startECGAsTheIssueWritesIt() throws {
        let command = try PMDCommand.start(.ecg, .h10ECG)
        #expect(command.bytes == [0x02, 0x00, 0x00, 0x01, 0x82, 0x00, 0x01, 0x01, 0x0E, 0x00])
    }

    @Test func startACCStopAndGetSettings() throws {
        let command = try PMDCommand.start(.acc, .h10ACC(rate: 200, rangeG: 8))
        #expect(
            command.bytes == [
                0x02, 0x02, 0x00, 0x01, 0xC8, 0x00, 0x01, 0x01, 0x10, 0x00, 0x02, 0x01, 0x08, 0x00,
            ])
        #expect(PMDCommand.stop(.acc).bytes == [0x03, 0x02])
        #expect(PMDCommand.getSettings(.ecg).bytes == [0x01, 0x00])
        // The SDK's `startMeasurement - offline recording type sets high bit in first byte`.
        #expect(
            try PMDCommand.start(.acc, PMDSelectedSettings([.sampleRate: 50]), recording: .offline).bytes
                == [0x02, 0x82, 0x00, 0x01, 0x32, 0x00])
        #expect(PMDCommand.getSettings(.acc, recording: .offline).bytes == [0x01, 0x82])
        #expect(PMDCommand.measurementStatus.bytes == [0x05])
    }

    @Test func settingsThatDoNotFitTheirField() {
        for settings in [
            PMDSelectedSettings([.sampleRate: 70_000]), PMDSelectedSettings([.channels: 256]),
            PMDSelectedSettings([.resolution: -1]), PMDSelectedSettings([.security: 1]),
        ] {
            #expect(throws: PMDError.self) { try PMDCommand.start(.acc, settings) }
        }
    }

    /// `PmdSettingTest.testPmdSettingsWithRange`.
    @Test func settingsWithRange() throws {
        let bytes: [UInt8] = [
            0x00, 0x01, 0x34, 0x00, 0x01, 0x01, 0x10, 0x00, 0x02, 0x04, 0xF5, 0x00, 0xF4, 0x01, 0xE8, 0x03,
            0xD0, 0x07,
            0x04, 0x01, 0x03,
        ]
        let settings = try PMDAvailableSettings(decoding: bytes[...])
        #expect(settings.values.count == 4)
        #expect(settings[.sampleRate] == [52])
        #expect(settings[.resolution] == [16])
        #expect(settings[.range] == [245, 500, 1000, 2000])
        #expect(settings[.channels] == [3])
        #expect(settings.values[.rangeMilliunit] == nil && settings.factor == nil)
        #expect(
            settings.maximal
                == PMDSelectedSettings([.sampleRate: 52, .resolution: 16, .range: 2000, .channels: 3]))
    }

    /// `PmdSettingTest.testPmdSettingWithRangeMilliUnit`: the 4-byte field is signed.
    @Test func settingsWithRangeMilliunit() throws {
        let bytes: [UInt8] = [
            0x03, 0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01, 0x01, 0x0E, 0x00,
        ]
        let settings = try PMDAvailableSettings(decoding: bytes[...])
        #expect(settings.values.count == 2)
        #expect(settings[.rangeMilliunit] == [-1, 0xFF])
        #expect(settings[.resolution] == [14])
    }

    /// `PmdSettingTest.testPmdSelectedSerialization`: every setting but the factor is written, and
    /// reads back.
    @Test func selectedSettingsReadBack() throws {
        let selected = PMDSelectedSettings([
            .sampleRate: 0x7FFF, .resolution: 0, .range: 15, .rangeMilliunit: Int(Int32.max), .channels: 4,
            .factor: 15,
        ])
        let settings = try PMDAvailableSettings(decoding: try selected.encoded()[...])
        #expect(settings.values.count == 5)
        #expect(settings[.sampleRate] == [0x7FFF])
        #expect(settings[.resolution] == [0])
        #expect(settings[.range] == [15])
        #expect(settings[.rangeMilliunit] == [Int(Int32.max)])
        #expect(settings[.channels] == [4])
        #expect(settings.values[.factor] == nil)
    }

    @Test func malformedSettings() {
        for (bytes, code, offset) in [
            ([0x07, 0x01, 0x00] as [UInt8], PMDError.Code.unknownSetting, 0),
            ([0x00, 0x01, 0x82, 0x00, 0x01], .truncatedSetting, 4),
            ([0x00, 0x02, 0x82, 0x00, 0x01], .truncatedSetting, 2),
        ] {
            do {
                _ = try PMDAvailableSettings(decoding: bytes[...])
                Issue.record("\(bytes) accepted")
            } catch {
                #expect(error.code == code)
                #expect(error.offset == offset)
            }
        }
        // One byte or none: no settings, as the SDK reads them.
        #expect((try? PMDAvailableSettings(decoding: [0x09][...]))?.values.isEmpty == true)
    }

    /// `BlePmdClientControlPointResponseTest`: a success with parameters.
    @Test func successResponse() throws {
        let response = try PMDResponse(decoding: [0xF0, 0x01, 0x02, 0x00, 0x00, 0xFF, 0xFF, 0xFF][...])
        #expect(response.op == .getMeasurementSettings)
        #expect(response.type == .acc)
        #expect(response.status == .success)
        #expect(!response.more)
        #expect(response.parameters == [0xFF, 0xFF, 0xFF])
    }

    /// `BlePmdClientControlPointResponseTest`: a failure.
    @Test func failureResponse() throws {
        let response = try PMDResponse(decoding: [0xF0, 0x01, 0x06, 0x07, 0x00][...])
        #expect(response.op == .getMeasurementSettings)
        #expect(response.type == .magnetometer)
        #expect(response.status == .invalidResolution)
        #expect(response.status.code == "invalid_resolution")
        #expect(!response.more && response.parameters.isEmpty)
    }

    @Test func everyStatusTheSDKListsHasACodeAndWords() {
        let codes = PMDResponseStatus.listed.map(\.code)
        #expect(codes.count == 15 && Set(codes).count == 15)
        #expect(codes.first == "success" && codes.last == "disk_full")
        for (raw, status) in PMDResponseStatus.listed.enumerated() {
            #expect(status.rawValue == UInt8(raw))
            #expect(PMDResponseStatus(rawValue: UInt8(raw)) == status)
            #expect(!status.message.isEmpty)
        }
        #expect(PMDResponseStatus(rawValue: 15) == .unknown(15))
        #expect(PMDResponseStatus(rawValue: 200).code == "unknown_200")
        #expect(PMDResponseStatus(rawValue: 200).rawValue == 200)
    }

    /// `BlePmdClientTest`'s start response with a factor: 2.5 as IEEE 754 bits.
    @Test func startResponseWithAFactor() throws {
        let bits = Float(2.5).bitPattern
        let parameters: [UInt8] = [
            0x05, 0x01, UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF),
            UInt8(bits >> 24),
        ]
        let bytes = PMDResponse.encode(
            op: .requestMeasurementStart, type: .ppg, status: .success, parameters: parameters)
        let response = try PMDResponse(decoding: bytes[...])
        #expect(try response.settings().factor == 2.5)
    }

    @Test func continuedResponsesJoin() throws {
        let first = try PMDResponse(
            decoding: PMDResponse.encode(
                op: .getMeasurementSettings, type: .acc, status: .success, more: true,
                parameters: [0x00, 0x01])[...])
        let second = try PMDResponse(
            decoding: PMDResponse.encode(
                op: .getMeasurementSettings, type: .acc, status: .success, parameters: [0x34, 0x00])[...])
        #expect(first.more)
        let joined = try first.appending(continuation: second)
        #expect(!joined.more)
        #expect(try joined.settings()[.sampleRate] == [52])
        let other = try PMDResponse(
            decoding: PMDResponse.encode(op: .stopMeasurement, type: .acc, status: .success)[...])
        #expect(throws: PMDError.self) { try first.appending(continuation: other) }
    }

    @Test func truncatedResponses() {
        for bytes in [[0xF0], [0xF0, 0x01], [0xF0, 0x01, 0x02]] as [[UInt8]] {
            do {
                _ = try PMDResponse(decoding: bytes[...])
                Issue.record("\(bytes) accepted")
            } catch {
                #expect(error.code == .truncatedResponse)
            }
        }
        // Four bytes: a status and no more byte.
        #expect((try? PMDResponse(decoding: [0xF0, 0x02, 0x00, 0x00][...]))?.more == false)
    }

    /// What the control point's value is, told by its first byte; `01 01 02` is the SDK's
    /// `process measurement stop control point command`.
    @Test func controlPointValuesToldApart() throws {
        #expect(
            try PMDControlPointValue(decoding: [0x0F, 0x05][...])
                == .features(try PMDFeatures(decoding: [0x0F, 0x05][...])))
        #expect(
            try PMDControlPointValue(decoding: [0x01, 0x01, 0x02][...]) == .measurementStopped([.ppg, .acc]))
        #expect(try PMDControlPointValue(decoding: [0x01][...]) == .measurementStopped([]))
        #expect(try PMDControlPointValue(decoding: [0x42, 0x00][...]) == .other([0x42, 0x00]))
        guard
            case .response(let response) = try PMDControlPointValue(
                decoding: [0xF0, 0x02, 0x00, 0x06, 0x00][...])
        else {
            Issue.record("a response not seen as one")
            return
        }
        #expect(response.status == .alreadyInState)
        #expect(throws: PMDError.self) { try PMDControlPointValue(decoding: [][...]) }
    }

    @Test func sensorTime() {
        #expect(PMDTime.unixNanoseconds(sensor: 0) == 946_684_800_000_000_000)
        // The SDK's time document's example timestamp, 724060800000000000.
        #expect(PMDTime.unixNanoseconds(sensor: 724_060_800_000_000_000) == 1_670_745_600_000_000_000)
        #expect(PMDTime.unixNanoseconds(sensor: .max) == nil)
        #expect(PMDTime.isUnsetH10Clock(599_616_023_171_427_290))
        #expect(!PMDTime.isUnsetH10Clock(694_512_749_912_654_440))
    }

    /// `PmdActiveMeasurementTest`: a status byte's top two bits.
    @Test func measurementStates() throws {
        #expect(
            PMDMeasurementState(statusByte: 0x80) == .offline
                && PMDMeasurementState(statusByte: 0xBF) == .offline)
        #expect(
            PMDMeasurementState(statusByte: 0x40) == .online
                && PMDMeasurementState(statusByte: 0x7F) == .online)
        #expect(PMDMeasurementState(statusByte: 0xC0) == .onlineAndOffline)
        #expect(PMDMeasurementState(statusByte: 0xFF) == .onlineAndOffline)
        #expect(
            PMDMeasurementState(statusByte: 0x00) == .inactive
                && PMDMeasurementState(statusByte: 0x3F) == .inactive)
        let response = try PMDResponse(
            decoding: PMDResponse.encode(
                op: .getMeasurementStatus, type: .ecg, status: .success, parameters: [0x40, 0x02, 0x89, 0x3F])[
                    ...])
        #expect(response.measurementStates() == [.ecg: .online, .acc: .inactive])
    }

    @Test func sdkModeCommands() {
        #expect(PMDCommand.startSDKMode.bytes == [0x02, 0x09])
        #expect(PMDCommand.stopSDKMode.bytes == [0x03, 0x09])
    }
}
