import HRV
import HeartRate
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

@Suite struct MonitorEventTests {
    let time = Timestamp(millisecondsSinceEpoch: 1_795_335_429_123)
    let address = "D2:4B:7E:10:20:30"

    @Test func measurementLine() throws {
        let m = try HeartRateMeasurement(decoding: [0x16, 0x48, 0x4D, 0x03])
        let line = MonitorEventJSON.line(MonitorEvent(time: time, device: address, kind: .measurement(m)))
        #expect(
            line
                == #"{"type":"measurement","time":"2026-11-22T08:17:09.123Z","device":"D2:4B:7E:10:20:30","bpm":72,"contact":"detected","energy_kj":null,"rr_1024":[845],"rr_ms":[825.1953125],"format":"uint8","zone":null}"#
        )
    }

    /// The literals a measurement line copies without escaping are the identifiers the contract
    /// names, for every case; and the bytes `watch --json` writes are the line, newline added.
    @Test func literalsAreTheIdentifiersAndTheBytesTheLine() throws {
        let contacts: [HeartRateMeasurement.SensorContact] = [.unsupported, .notDetected, .detected]
        for contact in contacts { #expect(contact.literal.text == contact.identifier) }
        let formats: [HeartRateMeasurement.ValueFormat] = [.uint8, .uint16]
        for format in formats { #expect(format.literal.text == format.rawValue) }
        let writer = MonitorEventJSON.LineWriter()
        for frame: [UInt8] in [
            [0x16, 0x48, 0x4D, 0x03, 0x00, 0x04], [0x09, 0x2C, 0x01, 0x02, 0x01], [0x04, 0x50],
        ] {
            let event = MonitorEvent(
                time: time, device: address, kind: .measurement(try HeartRateMeasurement(decoding: frame)))
            var bytes: [UInt8] = []
            #expect(
                writer.withLine(event, newline: true) {
                    bytes = Array($0)
                    return false
                } == false)
            #expect(String(decoding: bytes, as: UTF8.self) == MonitorEventJSON.line(event) + "\n")
        }
        // A line longer than the writer's scratch (it moves to the heap for its time), then a
        // short one in the scratch again.
        let long = String(repeating: "a \"quoted\" end ", count: 60)
        for detail in [long, "a \"quoted\" end"] {
            let status = MonitorEvent(time: time, device: nil, kind: .status(.stopped, detail: detail))
            var bytes: [UInt8] = []
            #expect(
                writer.withLine(status, newline: false) {
                    bytes = Array($0)
                    return true
                })
            #expect(String(decoding: bytes, as: UTF8.self) == MonitorEventJSON.line(status))
        }
        let status = MonitorEvent(
            time: time, device: nil, kind: .status(.stopped, detail: "a \"quoted\" end"))
        #expect(MonitorEventJSON.typeName(status.kind) == "status")
    }

    @Test func deviceLine() {
        let event = MonitorEvent(
            time: time, device: address,
            kind: .device(name: nil, rssi: nil, services: ["180d"], connected: false))
        #expect(
            MonitorEventJSON.line(event)
                == #"{"type":"device","time":"2026-11-22T08:17:09.123Z","device":"D2:4B:7E:10:20:30","address":"D2:4B:7E:10:20:30","name":null,"rssi":null,"services":["180d"],"connected":false}"#
        )
    }

    @Test func infoStatusBatteryError() {
        let info = MonitorEvent(
            time: time, device: address,
            kind: .info(name: "H10", location: .reserved(9), battery: 87, manufacturer: nil, model: "H10"))
        #expect(
            MonitorEventJSON.line(info).hasSuffix(
                #""name":"H10","location":"reserved(9)","battery":87,"manufacturer":null,"model":"H10"}"#))
        // How hrm subscribed, where it says (a replayed recording's info does not).
        let shared = MonitorEvent(
            time: time, device: address,
            kind: .info(
                name: "H10", location: nil, battery: nil, manufacturer: nil, model: nil, notify: .startNotify)
        )
        #expect(MonitorEventJSON.line(shared).hasSuffix(#""model":null,"notify":"StartNotify"}"#))
        let status = MonitorEvent(time: time, device: nil, kind: .status(.reconnecting, detail: nil))
        #expect(
            MonitorEventJSON.line(status)
                == #"{"type":"status","time":"2026-11-22T08:17:09.123Z","state":"reconnecting"}"#)
        let battery = MonitorEvent(time: time, device: address, kind: .battery(percent: 86))
        #expect(MonitorEventJSON.line(battery).hasSuffix(#""percent":86}"#))
        let error = MonitorEvent(
            time: time, device: address,
            kind: .error(code: EventErrorCode(.truncatedEnergy), message: "m", hex: "0e4801"))
        #expect(
            MonitorEventJSON.line(error).hasSuffix(
                #""code":"truncated_energy","message":"m","hex":"0e4801"}"#))
    }

    @Test func csvRow() throws {
        let m = try HeartRateMeasurement(decoding: [0x19, 0x2C, 0x01, 0x05, 0x00, 0x00, 0x04, 0x4D, 0x03])
        let row = MeasurementCSV.row(MonitorEvent(time: time, device: address, kind: .measurement(m)))
        #expect(
            row
                == "2026-11-22T08:17:09.123Z,D2:4B:7E:10:20:30,300,unsupported,5,1024 845,1000 825.1953125,uint16,"
        )
        #expect(MeasurementCSV.row(MonitorEvent(time: time, device: nil, kind: .battery(percent: 1))) == nil)
    }

    @Test func hrvAlertAndSummaryLines() {
        let metrics = HRVMetrics(
            beats: 70, artefacts: 1, seconds: 59.274, meanNN: 846.678, sdnn: 63.2449, rmssd: 26.5661,
            pnn50: 1.4493,
            meanHR: 70.8655, alpha1: nil)
        #expect(
            MonitorEventJSON.line(MonitorEvent(time: time, device: address, kind: .hrv(metrics)))
                == #"{"type":"hrv","time":"2026-11-22T08:17:09.123Z","device":"D2:4B:7E:10:20:30","beats":70,"artefacts":1,"mean_nn_ms":846.68,"sdnn_ms":63.24,"rmssd_ms":26.57,"pnn50":1.45,"mean_hr":70.87,"alpha1":null,"window_s":59.27}"#
        )
        let alert = HeartRateAlert(direction: .above, bpm: 163, bound: 160)
        #expect(
            MonitorEventJSON.line(MonitorEvent(time: time, device: address, kind: .alert(alert)))
                == #"{"type":"alert","time":"2026-11-22T08:17:09.123Z","device":"D2:4B:7E:10:20:30","alert":"above","bpm":163,"bound":160}"#
        )
        var report = SessionReport()
        report.connectedSeconds = 151.66
        report.measurements = 149
        report.minimumBPM = 62
        report.averageBPM = 74.1812
        report.maximumBPM = 83
        report.zoneSeconds = [0, 10.04, 141.5]
        report.hrv = HRVMetrics(beats: 184, artefacts: 2, rmssd: 24.0833, alpha1: 1.1812)
        #expect(
            MonitorEventJSON.line(MonitorEvent(time: time, device: address, kind: .summary(report)))
                == #"{"type":"summary","time":"2026-11-22T08:17:09.123Z","device":"D2:4B:7E:10:20:30","connected_s":151.7,"measurements":149,"min_bpm":62,"avg_bpm":74.18,"max_bpm":83,"zone_s":[0.0,10.0,141.5],"beats":184,"artefacts":2,"rmssd_ms":24.08,"alpha1":1.18}"#
        )
    }
}
