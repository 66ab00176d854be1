import MQTT
import Monitor
import SessionLibrary

/// `--mqtt URL`: the session published to a broker. It connects before the strap is touched, so
/// that bad credentials or a broker away are a clear error now (77, 69) rather than silence later;
/// once connected it takes each event at once into the client's non-blocking outbox.
package struct MQTTOutput: OutputProvider {
    /// The broker and the topics.
    package let settings: MQTTSettings

    func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        do throws(MQTTError) {
            let sink = try await MQTTSink.connect(
                settings, command: context.command, console: context.options.console, report: context.report)
            // A later output that cannot be opened: the broker is told `offline`, cleanly.
            return SessionOutput(delivery: .immediate(sink), abandon: { await sink.finish() })
        } catch {
            throw OutputFailure(
                code: EventErrorCode(error.code), message: "MQTT: \(error.message)",
                status: error.code == .refused ? 77 : 69)  // EX_NOPERM, EX_UNAVAILABLE
        }
    }

    /// Every stored property, as given.
    package init(settings: MQTTSettings) {
        self.settings = settings
    }
}
