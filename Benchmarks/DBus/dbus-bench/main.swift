// D-Bus benchmark: method-call round trip (median, p99) and signal throughput between two of our
// connections on a private bus, plus the same round trip by python3-dbus against our server, in
// the same run. Run it through `make bench-dbus` (dbus-run-session with Benchmarks/DBus/bus.conf).
import DBus
import Glibc
import Synchronization

func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
}

/// CPU time (user + system) this process has used, in µs.
func cpuMicros() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_utime.tv_sec * 1_000_000 + Int(usage.ru_utime.tv_usec) + usage.ru_stime.tv_sec * 1_000_000
        + Int(usage.ru_stime.tv_usec)
}

func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Runs python3-dbus against our server; returns (median, p99) in µs.
func pythonRoundTrip(address: String, name: String, count: Int) -> (Double, Double)? {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return nil }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_addclose(&actions, fds[0])
    let script = env("DBUS_BENCH_PY") ?? "Benchmarks/DBus/py_roundtrip.py"
    let argv = ["/usr/bin/python3", script, address, name, String(count)]
    var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { for p in cArgs { free(p) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, argv[0], &actions, nil, &cArgs, environ) == 0 else { return nil }
    close(fds[1])
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
        let n = read(fds[0], &buffer, 256)
        if n <= 0 { break }
        output += buffer[0..<n]
    }
    close(fds[0])
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    let parts = String(decoding: output, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
    guard parts.count == 2, let median = Double(parts[0]), let p99 = Double(parts[1]) else { return nil }
    return (median, p99)
}

let calls = Int(env("DBUS_BENCH_CALLS") ?? "") ?? 20_000
let signalCount = Int(env("DBUS_BENCH_SIGNALS") ?? "") ?? 200_000
let rounds = Int(env("DBUS_BENCH_ROUNDS") ?? "") ?? 5

guard let address = env("DBUS_SESSION_BUS_ADDRESS") else {
    print("dbus-bench: run me under dbus-run-session (make bench-dbus)")
    exit(64)
}

/// Idle check: CPU time used by a connected, subscribed, idle process over 2 s.
if env("DBUS_BENCH_IDLE") != nil {
    let idle = try await Connection(address: address)
    let stream = try await idle.signals(matching: MatchRule(interface: "org.example.Idle"))
    var before = rusage(), after = rusage()
    getrusage(RUSAGE_SELF.rawValue, &before)
    try await Task.sleep(for: .seconds(2))
    getrusage(RUSAGE_SELF.rawValue, &after)
    func micros(_ t: timeval) -> Int { t.tv_sec * 1_000_000 + Int(t.tv_usec) }
    let used = micros(after.ru_utime) + micros(after.ru_stime) - micros(before.ru_utime) - micros(before.ru_stime)
    print("idle connection: \(used) µs of CPU in 2 s")
    _ = stream
    await idle.close()
    exit(0)
}

let server = try await Connection(address: address)
try server.export(
    Interface("org.example.Bench", methods: [Method("Ping", input: "u", output: "u") { call in call.body }]),
    at: "/bench")
_ = try await server.requestName("org.example.Bench")
let client = try await Connection(address: address)

var ours: [(Double, Double)] = []
var python: [(Double, Double)] = []
var rates: [Double] = []
var perCPU: [Double] = []
for round in 1...rounds {
    // Our client, sequential calls.
    for i in 0..<500 {
        _ = try await client.call(
            destination: "org.example.Bench", path: "/bench", interface: "org.example.Bench", member: "Ping",
            body: [.uint32(UInt32(i))])
    }
    // The calling task prefers the client connection's own thread (see Connection.taskExecutor).
    var samples = try await withTaskExecutorPreference(client.taskExecutor) {
        var samples: [UInt64] = []
        samples.reserveCapacity(calls)
        for i in 0..<calls {
            let t = now()
            _ = try await client.call(
                destination: "org.example.Bench", path: "/bench", interface: "org.example.Bench", member: "Ping",
                body: [.uint32(UInt32(i))])
            samples.append(now() - t)
        }
        return samples
    }
    samples.sort()
    ours.append((percentile(samples, 0.5), percentile(samples, 0.99)))

    // python3-dbus against the same server, same bus, same run.
    if let result = pythonRoundTrip(address: address, name: "org.example.Bench", count: calls / 2) {
        python.append(result)
    }

    // Signal throughput: one emitter connection, one receiving stream.
    let emitter = try await Connection(address: address)
    let stream = try await client.signals(
        matching: MatchRule(sender: emitter.uniqueName, path: "/bench", interface: "org.example.Bench", member: "Tick"))
    // The consumer also runs on the client connection's thread: a yielded signal resumes it there.
    // The stream is bounded (Connection.signalCapacity): the last signal's number ends the round,
    // and the numbers skipped are the signals it dropped.
    let consumer = Task(executorPreference: client.taskExecutor) {
        var received = 0
        var first: UInt64 = 0
        var gaps = SignalGaps()
        for await signal in stream {
            if received == 0 { first = now() }
            received += 1
            _ = gaps.missed(before: signal.sequence)
            if signal.sequence == UInt64(signalCount) { break }
        }
        return (received, now() - first, gaps.missedInAll)
    }
    let cpuBefore = cpuMicros()
    for i in 0..<signalCount {
        try emitter.emitSignal(path: "/bench", interface: "org.example.Bench", member: "Tick", body: [.uint32(UInt32(i))])
        if i % 1000 == 999 { await emitter.flush() }
    }
    let (received, elapsed, dropped) = await consumer.value
    rates.append(Double(received) / (Double(elapsed) / 1e9))
    // Signals per second of CPU used by this process (emitting and receiving both counted).
    perCPU.append(Double(received) / (Double(cpuMicros() - cpuBefore) / 1e6))
    await emitter.close()
    let py = python.last.map { "python3-dbus median \($0.0) µs p99 \($0.1) µs" } ?? "python3-dbus: not available"
    print(
        "round \(round): ours median \(ours[round - 1].0) µs p99 \(ours[round - 1].1) µs; \(py); "
            + "signals \(Int(rates[round - 1]))/s wall, \(Int(perCPU[round - 1]))/s per CPU-second (\(received) received, \(dropped) dropped)")
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}
print("--- medians over \(rounds) rounds (\(calls) calls, \(signalCount) signals per round)")
print("round trip, ours:         median \(median(ours.map(\.0))) µs, p99 \(median(ours.map(\.1))) µs")
print("round trip, python3-dbus: median \(median(python.map(\.0))) µs, p99 \(median(python.map(\.1))) µs")
print("signals: \(Int(median(rates))) signals/s wall clock; \(Int(median(perCPU))) signals per CPU-second of this process (emitter + receiver)")
await client.close()
await server.close()
