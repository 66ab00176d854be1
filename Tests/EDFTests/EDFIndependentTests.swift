import CheckerSupport
import EDF
import Foundation
import Testing

/// The writer's files read back by independent readers, pyedflib (EDFlib's reader) and MNE-Python
/// (`mne.io.read_raw_edf`), through Tests/EDFCheck/edf_check.py in a venv at `.build/edf-venv`
/// (made by `make test-deps`, or by the first of these tests when it is missing). Without it (no
/// network, no python3-venv) the tests say SKIPPED and why, and record a known issue: never a
/// silent pass.
@Suite struct EDFIndependentTests {
    /// The checker and its venv.
    static let checker = IndependentChecker(
        venv: "edf", modules: ["pyedflib", "mne"], packages: ["pyedflib", "mne"],
        script: "Tests/EDFCheck/edf_check.py")

    /// nil when the venv is ready, else why not: made (or found wanting) once per test process.
    static let venv = Task { await checker.prepare() }

    /// What the readers must find in `file` (see edf_check.py): every signal's header fields and
    /// samples as physical values (clipped to the range, the last record padded with the last
    /// value), the annotations, the start.
    static func expectations(_ file: EDFFile) -> [String: Any] {
        let records =
            file.signals.map { ($0.samples.count + $0.samplesPerRecord - 1) / $0.samplesPerRecord }.max() ?? 0
        let start = file.start
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let micro = start.nanosecond / 1000
        let microText = String(repeating: "0", count: 6 - String(micro).count) + String(micro)
        return [
            "records": records,
            "start":
                "\(start.year)-\(two(start.month))-\(two(start.day))T\(two(start.hour)):\(two(start.minute)):\(two(start.second)).\(microText)",
            "equipment": file.equipment ?? "",
            "signals": file.signals.map { signal -> [String: Any] in
                let total = records * signal.samplesPerRecord
                let last = signal.samples.last ?? 0
                let values = (0..<total).map { index -> Double in
                    let value = index < signal.samples.count ? signal.samples[index] : last
                    return min(max(value, signal.physicalMinimum), signal.physicalMaximum)
                }
                return [
                    "label": signal.label, "dimension": signal.physicalDimension,
                    "rate": signal.samplesPerRecord,
                    "physical_min": signal.physicalMinimum, "physical_max": signal.physicalMaximum,
                    "digital_min": signal.digitalMinimum, "digital_max": signal.digitalMaximum,
                    "transducer": signal.transducer, "samples": values,
                ]
            },
            "annotations": file.annotations.map { annotation -> [String: Any] in
                [
                    "onset": Double(annotation.onset) / 1e9,
                    "duration": annotation.duration.map { Double($0) / 1e9 as Any } ?? NSNull(),
                    "text": annotation.text,
                ]
            },
        ]
    }

    /// Writes `file` and its expectations to a temporary folder and runs the readers on it.
    func check(_ file: EDFFile, _ name: String) async throws {
        if let reason = await Self.venv.value {
            print("SKIPPED: EDF+ read by pyedflib and MNE (\(name)) because \(reason)")
            withKnownIssue("SKIPPED: \(reason)") { Issue.record("independent EDF check (\(name)) not run") }
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "edf-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("\(name).edf")
        let expected = directory.appendingPathComponent("\(name).json")
        try Data(EDFWriter.bytes(file)).write(to: path)
        try JSONSerialization.data(withJSONObject: Self.expectations(file), options: [.sortedKeys]).write(
            to: expected)
        let result = try await Self.checker.check([path.path, "--expect-json", expected.path])
        for line in result.output.split(separator: "\n")
        where line.contains("FAIL") || line.contains("SKIPPED") || line.hasPrefix("edf-check: PASS (") {
            print("\(name): \(line)")
        }
        if result.status == 2 {
            print("SKIPPED: EDF+ read by pyedflib and MNE (\(name)) because the readers cannot be imported")
            withKnownIssue("SKIPPED: \(result.output)") {
                Issue.record("independent EDF check (\(name)) not run")
            }
            return
        }
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("edf-check: PASS ("))
    }

    /// A little ECG (µV), values as the H10 gives them: a beat every 0.8 s over a slow wave.
    static func ecg(seconds: Double) -> [Int32] {
        (0..<Int(seconds * 130)).map { index in
            let t = Double(index) / 130
            let phase = t.truncatingRemainder(dividingBy: 0.8)
            let r = phase < 0.05 ? 1500 * (1 - abs(phase - 0.025) / 0.025) : 0
            return Int32((200 * sin(2 * Double.pi * 0.3 * t) + r).rounded()) - 150
        }
    }

    static let start = EDFDateTime(
        year: 2026, month: 11, day: 26, hour: 8, minute: 30, second: 5, nanosecond: 250_000_000)

    /// ECG at 130 Hz and acceleration at 50 Hz (shorter, padded), R peaks and a disconnection
    /// annotated, a start between seconds.
    @Test(.timeLimit(.minutes(10))) func ecgAccelerationAndAnnotations() async throws {
        let ecg = Self.ecg(seconds: 64.5)
        let accSamples = Int(63.7 * 50)
        let x = (0..<accSamples).map { Int32(-30 + $0 % 61) }
        let y = (0..<accSamples).map { Int32(980 - $0 % 17) }
        let z = (0..<accSamples).map { Int32(-1990 + ($0 * 37) % 4000) }
        var annotations = stride(from: 0.0125, to: 64, by: 0.8).map {
            EDFAnnotation(onset: Int64($0 * 1e9), text: "R")
        }
        annotations.append(
            EDFAnnotation(onset: 30_000_000_000, duration: 2_500_000_000, text: "strap disconnected"))
        let file = EDFFile(
            start: Self.start, equipment: "hrm Polar H10",
            signals: [
                .ecg(microvolts: ecg, rate: 130), .acceleration(axis: "X", milliG: x, rate: 50),
                .acceleration(axis: "Y", milliG: y, rate: 50), .acceleration(axis: "Z", milliG: z, rate: 50),
            ], annotations: annotations)
        try await check(file, "ecg-acc")
    }

    /// Values at the ends of the 16-bit range and beyond (clipped), a range that is not one step
    /// per unit (quantised), no annotations, a whole-second start.
    @Test(.timeLimit(.minutes(10))) func extremesAndScaledRange() async throws {
        let edges: [Int32] = [-40000, -32768, -32767, -1, 0, 1, 32766, 32767, 40000]
        let scaled = EDFSignal(
            label: "ACC X", transducer: "accelerometer", physicalDimension: "mG", physicalMinimum: -2000,
            physicalMaximum: 2000, samplesPerRecord: 25,
            samples: (0..<250).map { Double($0 * 37 % 4400) - 2200 + 0.3 })
        let file = EDFFile(
            start: EDFDateTime(year: 2025, month: 2, day: 28, hour: 23, minute: 59, second: 59),
            signals: [.ecg(microvolts: Array(repeating: edges, count: 40).flatMap { $0 }, rate: 130), scaled])
        try await check(file, "extremes")
    }

    /// An hour of ECG: 3,600 records.
    @Test(.timeLimit(.minutes(10))) func anHour() async throws {
        let ecg = Self.ecg(seconds: 3600)
        let annotations = stride(from: 0.0125, to: 3600, by: 0.8).map {
            EDFAnnotation(onset: Int64($0 * 1e9), text: "R")
        }
        try await check(
            EDFFile(start: Self.start, signals: [.ecg(microvolts: ecg, rate: 130)], annotations: annotations),
            "hour")
    }
}
