import MQTT
import Monitor
import SessionLibrary

/// `--mqtt URL`: the session published to a broker. It connects before the strap is touched, so
/// that bad credentials or a broker away are a clear error now (77, 69) rather than silence later;
/// once connected it takes each event at once into the client's non-blocking outbox.
struct MQTTOutput: OutputProvider {
    /// The broker and the topics.
    let settings: MQTTSettings

    func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        do throws(MQTTError) {
            let sink = try await MQTTSink.connect(settings, command: context.command, report: context.report)
            return SessionOutput(delivery: .immediate(sink))
        } catch {
            throw OutputFailure(
                code: EventErrorCode(error.code), message: "MQTT: \(error.message)",
                status: error.code == .refused ? 77 : 69)  // EX_NOPERM, EX_UNAVAILABLE
        }
    }
}
