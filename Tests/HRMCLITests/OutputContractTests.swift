import Foundation
import Synchronization
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// The output contract: outputs opened in the order asked for, put in the contract's order
/// (queued, immediate, display), a failure to open ending it, verdicts read at the end, and the
/// registry of option groups.
@Suite struct OutputContractTests {
    /// An output that says when it is opened and hands back what it was given.
    struct Fake: OutputProvider {
        let name: String
        let opened: Opened
        var output: SessionOutput? = nil
        var failure: OutputFailure? = nil

        func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
            opened.names.withLock { $0.append(name) }
            if let failure { throw failure }
            return output ?? SessionOutput(delivery: .immediate(CollectingSink()))
        }
    }

    static func context() -> OutputContext {
        OutputContext(options: WatchOptions(), report: { _ in }, stop: SessionStop())
    }

    @Test func theContractPutsQueuedFirstAndTheDisplayLast() async throws {
        let opened = Opened()
        let first = CollectingSink()
        let second = CollectingSink()
        let display = StdoutSink(
            renderer: JSONLinesRenderer(), format: .json, command: "watch", closed: {})
        let providers: [any OutputProvider] = [
            Fake(name: "immediate 1", opened: opened, output: SessionOutput(delivery: .immediate(first))),
            Fake(name: "display", opened: opened, output: SessionOutput(delivery: .display(display))),
            Fake(
                name: "queued", opened: opened,
                output: SessionOutput(
                    delivery: .queued(
                        StalledSink(),
                        OutputQueue(capacity: 1, policy: .dropOldest, droppedCode: .recordingDropped) { _ in
                            ""
                        }))),
            Fake(name: "immediate 2", opened: opened, output: SessionOutput(delivery: .immediate(second))),
        ]
        let outputs = try await SessionOutputs.open(providers, Self.context())
        // Opened in the order asked for; given events in the contract's.
        #expect(opened.names.withLock { $0 } == ["immediate 1", "display", "queued", "immediate 2"])
        #expect(outputs.sinks.count == 4)
        #expect(outputs.sinks[0] is QueuedSink)
        #expect((outputs.sinks[1] as? CollectingSink) === first)
        #expect((outputs.sinks[2] as? CollectingSink) === second)
        #expect((outputs.sinks[3] as? StdoutSink) === display)
        #expect((outputs.display as? StdoutSink) === display)
        if let queued = outputs.sinks[0] as? QueuedSink { await queued.finish(timeout: .zero) }
    }

    @Test func aFailureToOpenEndsTheOpeningThere() async {
        let opened = Opened()
        let abandoned = Opened()
        let failure = OutputFailure(code: EventErrorCode(.refused), message: "MQTT: refused", status: 77)
        func giving(_ name: String) -> SessionOutput {
            SessionOutput(
                delivery: .immediate(CollectingSink()),
                abandon: { abandoned.names.withLock { $0.append(name) } })
        }
        let providers: [any OutputProvider] = [
            Fake(name: "recording", opened: opened, output: giving("recording")),
            Fake(name: "osc", opened: opened, output: giving("osc")),
            Fake(name: "mqtt", opened: opened, failure: failure),
            Fake(name: "after", opened: opened, output: giving("after")),
        ]
        do {
            _ = try await SessionOutputs.open(providers, Self.context())
            Issue.record("opened despite the failure")
        } catch {
            #expect(error.status == 77)
            #expect(error.code.rawValue == "mqtt_refused")
        }
        #expect(opened.names.withLock { $0 } == ["recording", "osc", "mqtt"])
        // What was opened gives back what it took, the last opened first.
        #expect(abandoned.names.withLock { $0 } == ["osc", "recording"])
    }

    @Test func theFirstFailedVerdictGivesTheStatus() {
        let late = Mutex<OutputVerdict?>(nil)
        let outputs = SessionOutputs(
            [
                SessionOutput(delivery: .immediate(CollectingSink()), verdict: { nil }),
                SessionOutput(delivery: .immediate(CollectingSink()), verdict: { late.withLock { $0 } }),
            ], report: { _ in })
        #expect(outputs.verdict() == nil)
        late.withLock { $0 = OutputVerdict(message: "the recording was not kept: disk full", status: 74) }
        #expect(outputs.verdict()?.status == 74)
    }

    @Test func aQueueThatDropsSaysSoWithItsCode() async throws {
        let reported = AsyncStream.makeStream(of: MonitorEvent.self)
        let sink = StalledSink()
        let queued = QueuedSink(
            sink,
            OutputQueue(capacity: 1, policy: .dropOldest, droppedCode: .alertCommandFailed) { "\($0) lost" },
            report: { reported.continuation.yield($0) })
        queued.start()
        for bpm in 0..<4 { queued.receive(measurement(UInt8(bpm))) }
        sink.release()
        var iterator = reported.stream.makeAsyncIterator()
        let event = try #require(await iterator.next())
        guard case .error(let code, let message, _) = event.kind else {
            Issue.record("not an error: \(event.kind)")
            return
        }
        #expect(code == .alertCommandFailed)
        #expect(message.hasSuffix(" lost"))
        await queued.finish(timeout: .seconds(5))
    }

    @Test func theRegistryAsksForTheOutputsInItsOrder() throws {
        let command = try #require(
            try HRM.parseAsRoot([
                "watch", "--mqtt", "mqtt://broker", "--alert-above", "150", "--on-alert", "true",
                "--no-config",
            ]) as? WatchCommand)
        let options = command.arguments.options(command: "watch", recording: .file("/tmp/x.jsonl"))
        #expect(options.outputs.count == 3)
        #expect(options.outputs[0] is RecordingOutput)
        #expect((options.outputs[1] as? AlertCommandOutput)?.command == "true")
        #expect((options.outputs[2] as? MQTTOutput)?.settings.url.host == "broker")
        let plain = try #require(try HRM.parseAsRoot(["watch", "--no-config"]) as? WatchCommand)
        #expect(plain.arguments.options(command: "watch", recording: nil).outputs.isEmpty)
    }

    /// Every error code hrm can send is in the README's list, so that scripts can rely on it.
    @Test func everyErrorCodeIsInTheReadme() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let missing = EventErrorCode.all.filter { !readme.contains("`\($0.rawValue)`") }
        #expect(missing.isEmpty, "not in the README: \(missing)")
        #expect(Set(EventErrorCode.all).count == EventErrorCode.all.count, "a code declared twice")
    }
}

/// The names of the outputs opened, in order.
final class Opened: Sendable {
    let names = Mutex<[String]>([])
}

/// A queued output's task is the session's: started by the session (`start`), never by the
/// initialiser, and finished by it (#28 item 5).
@Suite struct QueuedSinkOwnershipTests {
    @Test func nothingIsWrittenUntilTheSessionStartsIt() async {
        let sink = StalledSink()
        sink.release()
        let queued = QueuedSink(sink, capacity: 8, policy: .dropOldest) { _ in }
        queued.receive(measurement(70))
        // Not started: the event waits in the queue, and no task of the sink's is waiting either.
        #expect(!queued.idle)
        #expect(sink.written.isEmpty)
        let pipeline = EventPipeline(processors: [], sinks: [queued])
        pipeline.start()
        pipeline.send(measurement(71))
        await pipeline.finish()
        #expect(sink.written.count == 2)
        #expect(sink.closed)
    }

    @Test func finishWithoutAStartStillClosesTheSink() async {
        let sink = StalledSink()
        sink.release()
        let queued = QueuedSink(sink, capacity: 8, policy: .dropOldest) { _ in }
        queued.receive(measurement(70))
        await queued.finish(timeout: .seconds(30))
        #expect(sink.written.count == 1)
        #expect(sink.closed)
    }
}
