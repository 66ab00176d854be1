import Foundation
import Synchronization
import Testing
import Threads

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// A pipe whose buffer is full, as when the reader of hrm's stdout stops reading: the next write
/// to `writing` blocks until `read` takes something.
struct FullPipe: ~Copyable {
    let reading: Int32
    let writing: Int32
    /// Bytes put in to fill it ("x" each), before anything a test writes.
    let filler: Int

    init() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        (reading, writing) = (ends[0], ends[1])
        _ = fcntl(writing, 1031, 4096)  // F_SETPIPE_SZ: a page, the least there is
        let flags = fcntl(writing, F_GETFL)
        _ = fcntl(writing, F_SETFL, flags | O_NONBLOCK)
        var filled = 0
        var chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 512)
        while true {
            let written = write(writing, &chunk, chunk.count)
            if written <= 0 { break }
            filled += written
        }
        _ = fcntl(writing, F_SETFL, flags)
        filler = filled
    }

    /// Reads everything until the write end is closed, on a thread of its own; returns what came
    /// after the filler.
    func readToEnd() -> Task<[UInt8], Never> {
        let (reading, filler) = (self.reading, self.filler)
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        do {
            try LoopThread.start(named: "hrm-test-read") {
                var all: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = read(reading, &buffer, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    all.append(contentsOf: buffer[0..<count])
                }
                continuation.yield(Array(all.dropFirst(filler)))
                continuation.finish()
            }
        } catch {
            continuation.finish()
        }
        return Task {
            for await bytes in stream { return bytes }
            return []
        }
    }
}

/// A value threads share, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func callAsFunction() -> Value { value.withLock { $0 } }
    func change(_ body: @Sendable (inout Value) -> Void) { value.withLock { body(&$0) } }
}

/// Runs `body` on a thread of hrm's own (as the strap's notification reader), and returns once
/// it has.
func onLoopThread(_ body: @escaping @Sendable () -> Void) -> Task<Void, Never> {
    let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
    do {
        try LoopThread.start(named: "hrm-test-send") {
            body()
            continuation.finish()
        }
    } catch {
        continuation.finish()
    }
    return Task { for await _ in stream {} }
}

func lines(_ bytes: [UInt8]) -> [String] {
    String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

@Suite(.timeLimit(.minutes(1))) struct StdoutWriterTests {
    static func unused(_ stall: StdoutWriter.Stall) {}

    /// Lines from threads of hrm's own (written at once, by the sender) and from pool tasks
    /// (handed to the writer's thread) come out whole, in the order they were queued.
    /// stdout's queue keeps every byte in order as it grows, lends any range of them, and keeps
    /// its memory when emptied.
    @Test func outputBytesKeepEveryByteInOrder() {
        var bytes = OutputBytes()
        #expect(bytes.isEmpty && bytes.capacity == 0)
        var expected: [UInt8] = []
        for length in [0, 1, 255, 256, 300, 4096] {
            let chunk = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ length) }
            chunk.withUnsafeBufferPointer { bytes.append($0) }
            expected += chunk
        }
        #expect(bytes.count == expected.count)
        #expect(bytes.withBytes { Array($0) } == expected)
        #expect(bytes.withBytes(from: 10, upTo: 20) { Array($0) } == Array(expected[10..<20]))
        #expect(bytes.withBytes(from: expected.count - 3) { Array($0) } == Array(expected.suffix(3)))
        #expect(bytes.withBytes(from: 5, upTo: 2) { $0.count } == 0)
        let capacity = bytes.capacity
        bytes.removeAll()
        #expect(bytes.isEmpty && bytes.capacity == capacity)
        [1, 2, 3].withUnsafeBufferPointer { bytes.append($0) }
        #expect(bytes.withBytes { Array($0) } == [1, 2, 3])
    }

    @Test func orderIsKeptAcrossThreads() async throws {
        let path = WatchBinaryTests.temporary("stdout-order")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let writer = StdoutWriter(fd: fd, stalled: Self.unused, closed: {})
        let queued = Shared<[String]>([])
        @Sendable func send(_ line: String) {
            queued.change {
                $0.append(line)
                writer.append(line + "\n")
            }
            writer.flush()
        }
        var senders: [Task<Void, Never>] = []
        for thread in 0..<3 {
            senders.append(onLoopThread { for index in 0..<200 { send("loop \(thread) \(index)") } })
        }
        for task in 0..<3 {
            senders.append(Task.detached { for index in 0..<200 { send("task \(task) \(index)") } })
        }
        for sender in senders { await sender.value }
        await writer.finish(timeout: .seconds(30))
        let written = lines(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(written.count == 1200)
        #expect(written == queued())
    }

    /// A task's lines to a stdout nobody reads: the task goes on at once; past the bound lines
    /// are dropped and counted, and the count is reported once the reader takes output again.
    @Test func aStuckReaderHoldsUpNoTaskAndDropsPastTheBound() async throws {
        let pipe = try FullPipe()
        defer { close(pipe.reading) }
        let stalls = Shared<[StdoutWriter.Stall]>([])
        let writer = StdoutWriter(
            fd: pipe.writing, bound: 100, stallAfter: .zero,
            stalled: { stall in stalls.change { $0.append(stall) } },
            closed: {})
        for index in 0..<100 {
            writer.append("line \(index)\n")
            writer.flush()
        }
        // Here, on a pool thread, with nothing read: no task waited for the reader.
        let reader = pipe.readToEnd()
        await writer.finish(timeout: .seconds(30))
        close(pipe.writing)
        let written = lines(await reader.value)
        let dropped = stalls().map(\.dropped).reduce(0, +)
        #expect(dropped >= 100 - 2 * (100 / 7))  // at most the bound waits, beside one batch
        #expect(written.count + dropped == 100)
        let numbers = written.compactMap { Int($0.dropFirst("line ".count)) }
        #expect(numbers == numbers.sorted() && numbers.first == 0)
    }

    /// A task's line to a pipe with room is written by the task itself, at once: no thread is
    /// woken (or started) for a write that cannot wait.
    @Test func aTaskWritesItselfWhatCannotWait() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let writer = StdoutWriter(fd: ends[1], stalled: Self.unused, closed: {})
        writer.append("now\n")
        writer.flush()
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = read(ends[0], &buffer, buffer.count)
        #expect(count == 4 && buffer.prefix(4) == Array("now\n".utf8)[...])
        await writer.finish(timeout: .seconds(30))
    }

    @Test func finishGivesUpOnAStuckReader() async throws {
        let pipe = try FullPipe()
        defer { close(pipe.reading) }
        let writer = StdoutWriter(fd: pipe.writing, stalled: Self.unused, closed: {})
        writer.append("last\n")
        await writer.finish(timeout: .milliseconds(50))
        // It returned with the line still unwritten; now let it through, then clean up.
        let reader = pipe.readToEnd()
        await writer.finish(timeout: .seconds(30))
        close(pipe.writing)
        #expect(lines(await reader.value) == ["last"])
    }

    @Test func aReaderThatLeftStopsTheOutputOnce() async throws {
        signal(SIGPIPE, SIG_IGN)
        let pipe = try FullPipe()
        let closings = Shared(0)
        let writer = StdoutWriter(
            fd: pipe.writing, stalled: Self.unused, closed: { closings.change { $0 += 1 } })
        writer.append("one\n")
        close(pipe.reading)
        writer.flush()
        await writer.finish(timeout: .seconds(30))
        #expect(writer.closed)
        #expect(!writer.append("two\n"))
        #expect(closings() == 1)
        close(pipe.writing)
    }
}

@Suite(.timeLimit(.minutes(1))) struct StdoutSinkTests {
    /// The strap's thread blocked in a write to a stdout nobody reads holds the pipeline's lock no
    /// longer: events sent meanwhile reach the other sinks at once.
    @Test func aStuckStdoutHoldsUpNoOtherSink() async throws {
        let pipe = try FullPipe()
        defer { close(pipe.reading) }
        let stdout = StdoutSink(
            renderer: JSONLinesRenderer(), format: .json, command: "watch", closed: {}, fd: pipe.writing)
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        final class Other: EventSink {
            let collected = CollectingSink()
            let arrived: AsyncStream<Void>.Continuation
            init(_ arrived: AsyncStream<Void>.Continuation) { self.arrived = arrived }
            func receive(_ event: MonitorEvent) {
                collected.receive(event)
                arrived.yield()
            }
            func finish() async {}
        }
        let other = Other(arrived)
        let pipeline = EventPipeline(processors: [], sinks: [other, stdout])
        let strap = onLoopThread { pipeline.send(measurement(60)) }
        for await _ in arrivals { break }
        // The strap's thread is in (or on its way to) its write, which cannot end.
        for bpm in 61..<111 { pipeline.send(measurement(UInt8(bpm))) }
        #expect(other.collected.received.compactMap(bpm) == Array(60..<111))
        let reader = pipe.readToEnd()
        await strap.value
        await stdout.finish()
        close(pipe.writing)
        // A loaded machine may take 2 s to start the reader: then an output_stalled line follows.
        let written = lines(await reader.value).filter { !$0.contains("output_stalled") }
        #expect(written.count == 51)
        #expect(written.first?.contains("\"bpm\":60") == true)
    }

    /// A diagnostic during a live line: the line is taken off, the diagnostic written, the line
    /// drawn again, in that order, whichever thread writes.
    @Test func aDiagnosticComesBetweenTakingTheLiveLineOffAndDrawingItAgain() async throws {
        let path = WatchBinaryTests.temporary("stdout-live")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let stdout = StdoutSink(
            renderer: LiveRenderer(colour: false, width: { 80 }), format: .text, command: "watch",
            closed: {}, fd: fd, errorFD: fd)
        let events = [measurement(60), measurement(61)]
        var expected = LiveRenderer(colour: false, width: { 80 })
        var text = expected.render(events[0]) ?? ""
        text += (expected.suspend() ?? "") + "hrm watch: a note\n" + (expected.resume() ?? "")
        text += (expected.render(events[1]) ?? "") + (expected.finish() ?? "")
        let pipeline = EventPipeline(processors: [], sinks: [stdout])
        await onLoopThread { pipeline.send(events[0]) }.value
        stdout.interleave("hrm watch: a note")
        pipeline.send(events[1])
        await stdout.finish()
        let written = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        #expect(written == text)
        #expect(written.contains("\r\u{1B}[2Khrm watch: a note\n"))
    }

    @Test func theStallReportSaysHowManyLinesWereDropped() {
        func message(_ event: MonitorEvent) -> String? {
            if case .error(let code, let message, nil) = event.kind, code == .outputStalled {
                message
            } else {
                nil
            }
        }
        #expect(
            message(StdoutSink.stall(.milliseconds(3140)))
                == "standard output took nothing for 3.1 s: notifications that came meanwhile may have been lost"
        )
        #expect(
            message(StdoutSink.stall(.seconds(12), dropped: 40))
                == "standard output took nothing for 12.0 s: notifications that came meanwhile may have been lost; 40 lines of output dropped (more than 1 MiB waited)"
        )
    }
}
