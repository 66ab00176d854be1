import Foundation
import Testing

/// BlueZ's own client, bluetoothctl, against hrm-sim: what a real BlueZ client sees must work.
@Suite struct BluetoothctlFidelityTests {
    static var hrmSim: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("hrm-sim")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/hrm-sim")
    }

    /// Scan, connect, read 0x2A38, notify on 0x2A37, acquire-notify, disconnect.
    @Test(.timeLimit(.minutes(1))) func bluetoothctlSession() async throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/bluetoothctl"), "install the bluez package"
        )
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "btctl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("session.sh")
        let strap = "00:AA:01:01:00:01"
        try """
        {
          sleep 0.8; echo "select 00:AA:01:00:00:00"; echo "scan le"; sleep 1.5; echo "scan off"; sleep 0.3
          echo "connect \(strap)"; sleep 1.2; echo "menu gatt"
          echo "select-attribute 00002a38-0000-1000-8000-00805f9b34fb"; sleep 0.2; echo "read"; sleep 0.3
          echo "select-attribute 00002a37-0000-1000-8000-00805f9b34fb"; sleep 0.2
          echo "notify on"; sleep 2.3; echo "notify off"; sleep 0.3
          echo "acquire-notify"; sleep 2.3; echo "release-notify"; sleep 0.3
          echo "back"; echo "disconnect \(strap)"; sleep 2.6; echo "quit"
        } | bluetoothctl
        """.write(to: script, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("out")
        let logFile = directory.appendingPathComponent("sim.jsonl")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = Self.hrmSim
        process.arguments = ["--scenario", "lab", "--log", logFile.path, "--", "/bin/bash", script.path]
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Wait on a thread of its own: blocking the shared pool would starve tests running beside.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                process.waitUntilExit()
                done.resume()
            }
        }
        let raw = try String(contentsOf: output, encoding: .utf8)
        // Without bluetoothctl's colours and line editing: ESC [ digits ; letter, and \u{1} \u{2}.
        let text = raw.replacingOccurrences(
            of: "\u{1B}\\[[0-9;]*[A-Za-z]|[\u{1}\u{2}\r]", with: "", options: .regularExpression)
        #expect(process.terminationStatus == 0)
        for expected in [
            "[NEW] Device \(strap) Lab HRM", "[NEW] Device 00:AA:01:00:00:00 00-AA-01-00-00-00",
            "Connection successful", "ServicesResolved: yes",
            "/service0015/char0016", "Heart Rate Measurement", "char0019 Value:", "  01  ", "Notify started",
            "Notification:", "AcquireNotify success", "MTU 517", "Successful disconnected", "Connected: no",
        ] {
            #expect(text.contains(expected), "bluetoothctl printed no '\(expected)'")
        }
        #expect(
            text.components(separatedBy: "char0016 Value:").count - 1 >= 2,
            "notifications by PropertiesChanged")

        // The simulator's log has the calls in the order bluetoothctl made them.
        let members = try String(contentsOf: logFile, encoding: .utf8).split(separator: "\n").compactMap {
            line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).flatMap { entry in
                entry["event"] as? String == "call" ? entry["member"] as? String : nil
            }
        }
        let flow = [
            "StartDiscovery", "StopDiscovery", "Connect", "ReadValue", "StartNotify", "StopNotify",
            "AcquireNotify", "Disconnect",
        ]
        #expect(members.filter { flow.contains($0) } == flow)
    }
}
